// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as the peer's side of the RMA
// emulation's wire (docs/rma.md "The emulation"), straight into rma::Link:
// the hello check, frames of every type, read and write requests against
// this side's exposures, answers to the reads and writes this side started.
//
// Input: 3 control bytes, then the peer's bytes.
//   [0] flags: see the k* constants below
//   [1] piece size (0: all at once), so headers and frames arrive split
//   [2] bits 0-3: with kRepeat the peer's bytes are sent 2^n more times, up
//       to 256 KiB, so a small input can claim and send a lot; bits 4-6: the
//       output limit (the connection's write_buffer_limit), 4 KiB << n, 7:
//       none.  A link held at the limit waits for the peer to read its
//       answers (kPeerReads), or stops being fed, as a connection stops
//       reading.
// In the peer's bytes the 8-byte placeholders "KEY#RW##", "KEY#RO##" and
// "KEY#WO##" become the random keys of this side's exposures (ids 1, 2, 3),
// so the fuzzer reaches accepted accesses, not only refusals.
//
// What must hold whatever the peer sends: no crash or UB (ASan, UBSan), no
// byte outside an exposure written (guard bytes around every buffer), a
// read-only or revoked exposure unchanged, an exposure whose key the peer
// was never given unchanged, the bytes the link buffers from the wire
// bounded (docs/rma.md: less than a header and the largest frame once a
// demux is not held), the output bounded by the limit (an answer at most
// past it) and per byte received, each operation's callback at most once
// (exactly once after fail_all), and a protocol error's reason printable
// and short.
#include "rma_link.hpp"
#include "rma_wire.hpp"

#include <twinwire/buffer.hpp>
#include <twinwire/transport.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace twinwire;

constexpr uint8_t kHello = 1 << 0;     ///< prepend a valid hello to the peer's bytes
constexpr uint8_t kExpose = 1 << 1;    ///< this side exposes three regions
constexpr uint8_t kPost = 1 << 2;      ///< this side starts a read (tag 1) and a write (tag 2)
constexpr uint8_t kPeerReads = 1 << 3; ///< the output is taken after every piece
constexpr uint8_t kRevoke = 1 << 4;    ///< the read-write exposure is revoked after the first piece
constexpr uint8_t kRepeat = 1 << 5;    ///< the peer's bytes are sent repeatedly
constexpr uint8_t kFail = 1 << 6;      ///< end with fail_all (else drop_all)

constexpr size_t kGuard = 64;
constexpr char kGuardByte = 0x5a;
constexpr size_t kAmplified = 256 * 1024;
/// What the link may hold of the wire after a demux that is not held: less
/// than one frame's header and the largest payload any frame may carry
/// (docs/rma.md; stream bytes go on to the application as they arrive).
constexpr size_t kMaxWireIn = rma::kHeaderSize + rma::kMaxPayload;
/// The largest answer frame: header, status, a reason cut at 200 bytes.
constexpr size_t kMaxAnswer = rma::kHeaderSize + 4 + 200;
/// Link::pump queues chunks while the output holds less than this (rma_link.cpp).
constexpr size_t kPumpLow = 256 * 1024;
/// This side's hello and the read request it posts, queued before any limit applies.
constexpr size_t kOwnFrames = 256;

[[noreturn]] void broken(const std::string &what)
{
    std::fprintf(stderr, "fuzz-rma-wire: %s\n", what.c_str());
    std::abort();
}

/// A buffer with guard bytes on both sides: nothing may write outside it.
class Guarded {
public:
    explicit Guarded(size_t n, char fill) : bytes_(n + 2 * kGuard, kGuardByte) { std::memset(data(), fill, n); }
    char *data() { return bytes_.data() + kGuard; }
    size_t size() const { return bytes_.size() - 2 * kGuard; }
    void check(const char *name) const
    {
        for (size_t i = 0; i < kGuard; ++i)
            if (bytes_[i] != kGuardByte || bytes_[bytes_.size() - 1 - i] != kGuardByte)
                broken(std::string("a byte outside ") + name + " was written");
    }
    std::string contents() const { return std::string(bytes_.data() + kGuard, size()); }
    bool same(const std::string &s) const { return std::memcmp(bytes_.data() + kGuard, s.data(), size()) == 0; }
    bool all(char c) const
    {
        return std::all_of(bytes_.begin() + kGuard, bytes_.end() - kGuard, [c](char b) { return b == c; });
    }

private:
    std::vector<char> bytes_;
};

std::string hello()
{
    Buffer b;
    rma::Link().hello(b);
    return b.take(b.size());
}

void replace_all(std::string &s, const std::string &from, const std::string &to)
{
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
}

std::string key_bytes(const std::string &descriptor)
{
    rma::Descriptor d;
    std::string why;
    if (!rma::decode(descriptor, &d, &why)) broken("this side's own descriptor does not decode: " + why);
    std::string out;
    rma::put_u64(out, d.key);
    return out;
}

void check_reason(const std::string &why)
{
    if (why.empty()) broken("a protocol error without a reason");
    if (why.size() > 512) broken("a reason of " + std::to_string(why.size()) + " bytes");
    for (unsigned char c : why)
        if (c < 0x20 || c > 0x7e) broken("a reason with an unprintable byte: " + why);
}

struct Harness {
    rma::Link link;
    Buffer out, input;
    Guarded rw{4096, 'w'}, ro{512, 'r'}, wo{256, 'o'};
    Guarded read_into{1000, 0}, write_from{70000, 'x'};
    std::string ro_before, rw_at_revoke;
    bool revoked = false;
    /// Calls of each operation's callback (tag 1: read, tag 2: write).
    int calls[3] = {0, 0, 0};
    bool posted = false;
    size_t out_limit = SIZE_MAX;
    bool peer_reads = false;
    /// Held with a peer that does not read: the connection stopped reading.
    bool paused = false;

    void check_memory()
    {
        rw.check("the read-write exposure");
        ro.check("the read-only exposure");
        wo.check("the write-only exposure");
        read_into.check("a read's local buffer");
        write_from.check("a write's local buffer");
        if (!ro.same(ro_before)) broken("a read-only exposure was written");
        if (revoked && !rw.same(rw_at_revoke)) broken("a revoked exposure was written");
        if (!write_from.all('x')) broken("a write's source was written");
    }

    void run_completions()
    {
        for (auto &c : link.take_completions()) c();
        for (int tag = 1; tag <= 2; ++tag)
            if (calls[tag] > 1) broken("a callback ran " + std::to_string(calls[tag]) + " times");
    }

    void post()
    {
        std::string peer = rma::encode(rma::Descriptor{7, 0x1122334455667788ull, 1 << 20, TW_RMA_READ | TW_RMA_WRITE});
        std::string why;
        auto done = [this](int tag) { return [this, tag](std::error_code, const std::string &) { ++calls[tag]; }; };
        if (link.post(TW_RMA_OP_READ, peer, 0, read_into.data(), read_into.size(), done(1), &why) != 0)
            broken("posting a read failed: " + why);
        if (link.post(TW_RMA_OP_WRITE, peer, 4096, write_from.data(), write_from.size(), done(2), &why) != 0)
            broken("posting a write failed: " + why);
        posted = true;
    }

    /// The output queued must stay bounded: pump adds chunks only below its
    /// low mark, answers at most one per frame received.
    void pump()
    {
        size_t before = out.size();
        link.pump(out);
        size_t limit = std::max(before, kPumpLow) + rma::kHeaderSize + rma::kMaxPayload + kMaxAnswer + kOwnFrames;
        if (out.size() > limit)
            broken("pump queued " + std::to_string(out.size() - before) + " bytes on " + std::to_string(before));
        check_output();
    }

    /// docs/rma.md: output < max(write_buffer_limit, 256 KiB + 64 KiB + 40) + 220.
    void check_output() const
    {
        if (out_limit == SIZE_MAX) return;
        size_t bound = std::max(out_limit, kPumpLow + rma::kChunk + 40) + kMaxAnswer + kOwnFrames;
        if (out.size() >= bound)
            broken("the output holds " + std::to_string(out.size()) + " bytes (limit " + std::to_string(out_limit) +
                   ", bound " + std::to_string(bound) + ")");
    }

    /// One demux as the connection runs it; false once the link refused the
    /// stream.
    bool demux_once()
    {
        size_t out_before = out.size(), wire_before = link.wire_in().size();
        std::string why;
        bool ok = link.demux(input, out, out_limit, &why);
        check_memory();
        run_completions();
        if (!ok) {
            check_reason(why);
            return false;
        }
        if (!link.held() && link.wire_in().size() >= kMaxWireIn)
            broken("the link holds " + std::to_string(link.wire_in().size()) + " bytes of the wire (bound " +
                   std::to_string(kMaxWireIn) + ")");
        if (!link.held() && link.buffered() > kMaxWireIn + rma::kMaxPayload)
            broken("the link buffers " + std::to_string(link.buffered()) + " bytes");
        if (link.held() && out.size() < out_limit) broken("held with room in the output");
        // Each answer is to a frame of at least a header: what one read
        // makes this side queue is bounded by what it received.
        size_t consumed = wire_before - link.wire_in().size();
        size_t frames = consumed / rma::kHeaderSize + 1;
        if (out.size() > out_before + frames * kMaxAnswer)
            broken("demux queued " + std::to_string(out.size() - out_before) + " bytes for " +
                   std::to_string(consumed) + " received");
        check_output();
        input.clear(); // the application takes its stream bytes
        return true;
    }

    /// Feed one piece; false once the link refused the stream.
    bool feed(const char *p, size_t n)
    {
        link.wire_in().append(p, n);
        for (;;) {
            if (!demux_once()) return false;
            if (!link.held()) break;
            if (!peer_reads) {
                paused = true; // the connection stops reading: nothing more is fed
                break;
            }
            out.clear(); // the peer reads its answers: room again
            link.release();
        }
        pump();
        check_memory();
        return true;
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    const uint8_t flags = data[0], piece_seed = data[1], amplify = data[2] & 0x0f, limit = (data[2] >> 4) & 7;
    std::string body(reinterpret_cast<const char *>(data) + 3, size - 3);

    Harness h;
    h.out_limit = limit == 7 ? SIZE_MAX : size_t(4096) << limit;
    h.peer_reads = flags & kPeerReads;
    h.ro_before = h.ro.contents();
    h.link.hello(h.out);
    // A peer that was never given a key cannot know it (64 random bits): an
    // exposure whose key placeholder is not in the input must stay as it was.
    const bool knows_rw = body.find("KEY#RW##") != std::string::npos;
    const bool knows_wo = body.find("KEY#WO##") != std::string::npos;
    if (flags & kExpose) {
        std::string d_rw, d_ro, d_wo;
        if (h.link.expose(h.rw.data(), h.rw.size(), TW_RMA_READ | TW_RMA_WRITE, &d_rw) != 1 ||
            h.link.expose(h.ro.data(), h.ro.size(), TW_RMA_READ, &d_ro) != 2 ||
            h.link.expose(h.wo.data(), h.wo.size(), TW_RMA_WRITE, &d_wo) != 3)
            broken("exposure ids are not 1, 2, 3");
        replace_all(body, "KEY#RW##", key_bytes(d_rw));
        replace_all(body, "KEY#RO##", key_bytes(d_ro));
        replace_all(body, "KEY#WO##", key_bytes(d_wo));
    }
    if (flags & kPost) h.post();
    h.pump();

    std::string wire = (flags & kHello) ? hello() + body : body;
    size_t total = wire.size();
    if ((flags & kRepeat) && !body.empty())
        total = std::min(kAmplified, wire.size() + body.size() * (size_t(1) << amplify));
    const size_t piece = piece_seed ? piece_seed : total;
    // Small pieces split the frames of the input itself; its repetitions
    // go in larger ones, so that a run stays short.
    constexpr size_t kRepeatedPiece = 16 * 1024;

    // The repetitions are fed from copies of the body side by side.
    std::string block;
    if (total > wire.size())
        while (block.size() < kRepeatedPiece) block += body;

    bool ok = true;
    bool first = true;
    for (size_t sent = 0; ok && !h.paused && sent < total;) {
        // The bytes from `sent` on: the wire, then the body over and over.
        const bool in_wire = sent < wire.size();
        const std::string &from = in_wire ? wire : block;
        size_t at = in_wire ? sent : (sent - wire.size()) % block.size();
        size_t n = std::min({in_wire ? piece : std::max(piece, kRepeatedPiece), total - sent, from.size() - at});
        ok = h.feed(from.data() + at, n);
        sent += n;
        if (flags & kPeerReads) h.out.clear();
        if (first && (flags & kRevoke) && (flags & kExpose)) {
            h.link.revoke(1);
            h.revoked = true;
            h.rw_at_revoke = h.rw.contents();
        }
        first = false;
    }

    if (flags & kFail) {
        h.link.fail_all(std::make_error_code(std::errc::connection_reset), "fuzz: the connection failed");
        h.run_completions();
        if (h.posted && (h.calls[1] != 1 || h.calls[2] != 1))
            broken("after fail_all a callback ran " + std::to_string(h.calls[1]) + " and " +
                   std::to_string(h.calls[2]) + " times");
    } else {
        h.link.drop_all();
        int before = h.calls[1] + h.calls[2];
        h.run_completions();
        if (h.calls[1] + h.calls[2] != before) broken("a callback ran after drop_all");
    }
    h.check_memory();
    if (!knows_rw && !h.rw.all('w')) broken("an exposure was written by a peer that never had its key");
    if (!knows_wo && !h.wo.all('o')) broken("a write-only exposure was written by a peer that never had its key");
    return 0;
}
