// SPDX-License-Identifier: MIT
#include "rma_link.hpp"

#include <twinwire/error.hpp>
#include <twinwire/transport.h>

#include <event2/buffer.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace twinwire::rma {
namespace {

/// Chunks are queued while the output holds less than this: a 64 MiB
/// transfer never sits in the output at once, and stream bytes written
/// meanwhile wait behind at most this much.
constexpr size_t kPumpLow = 256 * 1024;
/// Bounds on what a peer can make this side remember.
constexpr size_t kMaxTurns = 4096;
constexpr size_t kMaxRefusedWrites = 4096;
constexpr size_t kMaxReason = 200;

uint64_t random_key()
{
    uint64_t key = 0;
    while (getrandom(&key, sizeof key, 0) != sizeof key) {
    }
    return key;
}

void put_frame(Buffer &out, Frame type, uint8_t flags, uint64_t tag, const std::string &fields, const void *bytes,
               size_t n)
{
    char h[kHeaderSize];
    put_header(h, Header{static_cast<uint32_t>(fields.size() + n), type, flags, tag});
    out.append(h, sizeof h);
    out.append(fields);
    if (n) out.append(bytes, n);
}

std::string hello_bytes()
{
    std::string fields;
    put_u32(fields, kMagic);
    put_u32(fields, kVersion);
    char h[kHeaderSize];
    put_header(h, Header{static_cast<uint32_t>(fields.size()), Frame::hello, 0, 0});
    return std::string(h, sizeof h) + fields;
}

} // namespace

void Link::hello(Buffer &out) { out.append(hello_bytes()); }

// The first bytes must be the peer's hello, byte for byte.  The reason is
// decided at the first byte that differs, the same however the bytes are
// cut into reads: a length or type that is not a hello's, or another magic,
// means stream bytes (the peer did not enable RMA), said at once; a hello
// header with other flags, reserved bytes or tag waits for the whole hello,
// whose magic and version then say which it is.
bool Link::check_hello(std::string *why)
{
    static const std::string expected = hello_bytes();
    constexpr size_t kMagicAt = kHeaderSize, kVersionAt = kHeaderSize + 4;
    char got[kHeaderSize + 8];
    static_assert(sizeof got == 24, "the hello: a header, magic and version");
    size_t n = wire_in_.peek(got, expected.size());
    size_t i = 0;
    while (i < n && got[i] == expected[i]) ++i;
    if (i == expected.size()) {
        wire_in_.drain(expected.size());
        hello_seen_ = true;
        return true;
    }
    const std::string stream_bytes = "the peer did not enable RMA on this connection: it sent stream bytes where the "
                                     "RMA hello belongs (call enable_rma() on both ends before any byte is sent)";
    if (i < n && (i <= 4 || (i >= kMagicAt && i < kVersionAt))) { // length, type or magic
        *why = stream_bytes;
        return false;
    }
    if (n < expected.size()) return true; // wait for the rest
    if (get_u32(got + kMagicAt) != kMagic) {
        *why = stream_bytes;
    } else if (get_u32(got + kVersionAt) != kVersion) {
        *why = "the peer speaks RMA emulation version " + std::to_string(get_u32(got + kVersionAt)) + ", this side " +
               std::to_string(kVersion);
    } else {
        Header h = get_header(got);
        *why = "the peer's RMA hello is malformed: flags " + std::to_string(h.flags) + ", reserved " +
               std::to_string(get_u32(got + 4) >> 16) + ", tag " + std::to_string(h.tag) + " (a hello has them all 0)";
    }
    return false;
}

bool Link::take_transport_end(ssize_t *last)
{
    if (transport_end_ > 0) return false;
    *last = transport_end_;
    transport_end_ = 1;
    return true;
}

bool Link::demux(Buffer &input, Buffer &out, size_t out_limit, std::string *why)
{
    if (!hello_seen_) {
        if (!check_hello(why)) return false;
        if (!hello_seen_) return true;
    }
    held_ = false;
    char hb[kHeaderSize];
    for (;;) {
        if (data_left_) {
            // Stream bytes go to the application as they arrive (moved,
            // not copied), so its own limits see them as on a raw stream.
            size_t n = static_cast<size_t>(std::min<uint64_t>(data_left_, wire_in_.size()));
            if (!n) break;
            Buffer part;
            evbuffer_remove_buffer(wire_in_.raw(), part.raw(), n);
            input.append(part);
            data_left_ -= n;
            continue;
        }
        if (wire_in_.peek(hb, sizeof hb) != sizeof hb) break;
        Header h = get_header(hb);
        if (h.type == Frame::data) {
            if (peer_end_) {
                *why = "stream bytes after the peer's end of stream (a data frame of " + std::to_string(h.len) +
                       " bytes after its end frame)";
                return false;
            }
            wire_in_.drain(kHeaderSize);
            data_left_ = h.len;
            continue;
        }
        if (h.len > kMaxPayload) {
            *why = "a frame of " + std::to_string(h.len) + " bytes (type " + std::to_string(int(h.type)) +
                   "): more than the " + std::to_string(kMaxPayload) + " any frame carries";
            return false;
        }
        if (wire_in_.size() < kHeaderSize + h.len) break;
        // Requests wait while the answers already queued are not read: the
        // connection stops reading, and the peer with it (docs/rma.md).
        bool asks = h.type == Frame::read_req || (h.type == Frame::write_data && (h.flags & kLast));
        if (asks && out.size() >= out_limit) {
            held_ = true;
            break;
        }
        wire_in_.drain(kHeaderSize);
        frame_.resize(h.len);
        if (h.len) wire_in_.peek(frame_.data(), h.len);
        wire_in_.drain(h.len);
        if (!handle(h, frame_.data(), out, why)) return false;
    }
    return true;
}

bool Link::handle(const Header &h, const char *p, Buffer &out, std::string *why)
{
    switch (h.type) {
    case Frame::end:
        if (h.len) break;
        if (peer_end_) {
            *why = "a second end frame (the peer's stream had already ended)";
            return false;
        }
        peer_end_ = true;
        return true;
    case Frame::read_req:
        return on_read_req(h, p, out, why);
    case Frame::write_data:
        return on_write_data(h, p, out, why);
    case Frame::read_data:
        return on_read_data(h, p, why);
    case Frame::read_done:
    case Frame::write_done:
        return on_done(h, p, why);
    case Frame::hello:
    case Frame::data:
        break;
    }
    *why = "an unexpected frame (type " + std::to_string(int(h.type)) + ", " + std::to_string(h.len) + " bytes)";
    return false;
}

int Link::check_access(uint64_t id, uint64_t key, uint64_t offset, uint64_t len, uint32_t mode, std::string *why) const
{
    auto it = exposures_.find(id);
    if (it == exposures_.end() || it->second.key != key) {
        *why = "no such exposure on this connection (revoked, never exposed, or another connection's)";
        return -TW_EREMOTEACCESS;
    }
    const Exposure &e = it->second;
    if (!(e.access & mode)) {
        *why = std::string("the exposure does not allow ") + (mode == TW_RMA_READ ? "reading" : "writing");
        return -TW_EREMOTEACCESS;
    }
    if (offset > e.len || len > e.len - offset) {
        *why = "bytes " + std::to_string(offset) + ".." + std::to_string(offset + len) +
               " are outside the exposure's " + std::to_string(e.len);
        return -TW_EREMOTEACCESS;
    }
    return 0;
}

void Link::answer(Buffer &out, Frame type, uint64_t tag, int status, const std::string &reason)
{
    std::string fields;
    put_u32(fields, static_cast<uint32_t>(status));
    fields += reason.substr(0, kMaxReason);
    put_frame(out, type, 0, tag, fields, nullptr, 0);
}

bool Link::on_read_req(const Header &h, const char *p, Buffer &out, std::string *why)
{
    if (h.len != 32) {
        *why = "a read request of " + std::to_string(h.len) + " bytes (32 expected)";
        return false;
    }
    uint64_t id = get_u64(p), key = get_u64(p + 8), offset = get_u64(p + 16), len = get_u64(p + 24);
    std::string refused;
    int rc = len ? check_access(id, key, offset, len, TW_RMA_READ, &refused) : -EINVAL;
    if (rc < 0) {
        answer(out, Frame::read_done, h.tag, rc, len ? refused : "an empty read");
        return true;
    }
    if (serving_ >= kMaxTurns) {
        *why = "more than " + std::to_string(kMaxTurns) + " reads in flight to serve";
        return false;
    }
    turns_.push_back(Turn{true, h.tag, id, offset, len});
    ++serving_;
    return true;
}

bool Link::on_write_data(const Header &h, const char *p, Buffer &out, std::string *why)
{
    if (h.len < 24) {
        *why = "a write chunk of " + std::to_string(h.len) + " bytes (at least 24 expected)";
        return false;
    }
    uint64_t id = get_u64(p), key = get_u64(p + 8), offset = get_u64(p + 16);
    size_t n = h.len - 24;
    auto refused = refused_writes_.find(h.tag);
    if (refused == refused_writes_.end()) {
        std::string reason;
        int rc = check_access(id, key, offset, n, TW_RMA_WRITE, &reason);
        if (rc == 0) {
            if (n) std::memcpy(exposures_[id].data + offset, p + 24, n);
        } else {
            if (refused_writes_.size() >= kMaxRefusedWrites) {
                *why = "more than " + std::to_string(kMaxRefusedWrites) + " refused writes unfinished";
                return false;
            }
            refused = refused_writes_.emplace(h.tag, std::make_pair(rc, reason)).first;
        }
    }
    if (h.flags & kLast) {
        if (refused != refused_writes_.end()) {
            answer(out, Frame::write_done, h.tag, refused->second.first, refused->second.second);
            refused_writes_.erase(refused);
        } else {
            answer(out, Frame::write_done, h.tag, 0, "");
        }
    }
    return true;
}

bool Link::on_read_data(const Header &h, const char *p, std::string *why)
{
    auto it = ops_.find(h.tag);
    if (it == ops_.end() || it->second.op != TW_RMA_OP_READ || h.len < 8) {
        *why = "read data for no read in flight (tag " + std::to_string(h.tag) + ")";
        return false;
    }
    Op &op = it->second;
    uint64_t at = get_u64(p);
    size_t n = h.len - 8;
    if (at > op.len || n > op.len - at) {
        *why = "read data past the end of the read (" + std::to_string(at + n) + " of " + std::to_string(op.len) + ")";
        return false;
    }
    std::memcpy(op.local + at, p + 8, n);
    op.received += n;
    return true;
}

bool Link::on_done(const Header &h, const char *p, std::string *why)
{
    auto it = ops_.find(h.tag);
    uint32_t kind = h.type == Frame::read_done ? TW_RMA_OP_READ : TW_RMA_OP_WRITE;
    if (it == ops_.end() || it->second.op != kind || h.len < 4) {
        *why = "an answer for no operation in flight (tag " + std::to_string(h.tag) + ")";
        return false;
    }
    int status = static_cast<int>(get_u32(p));
    std::string reason(p + 4, h.len - 4);
    if (status == 0 && kind == TW_RMA_OP_READ && it->second.received != it->second.len) {
        status = -EPROTO;
        reason = "the peer ended the read after " + std::to_string(it->second.received) + " of " +
                 std::to_string(it->second.len) + " bytes";
    }
    complete(it->second, status, status ? "peer refused: " + reason : std::string());
    ops_.erase(it);
    return true;
}

void Link::complete(Op &op, int status, std::string reason)
{
    RmaCallback cb = std::move(op.done);
    std::error_code code = status ? code_from_transport(status) : std::error_code();
    completions_.push_back([cb, code, reason] { cb(code, reason); });
}

void Link::frame_data(Buffer &out, const void *data, size_t len)
{
    const char *p = static_cast<const char *>(data);
    while (len) {
        // Frames of at most 4 GiB - 1: the header's length is 32 bits.
        size_t n = std::min<size_t>(len, UINT32_MAX);
        put_frame(out, Frame::data, 0, 0, std::string(), p, n);
        p += n;
        len -= n;
    }
}

void Link::frame_data(Buffer &out, Buffer &data)
{
    while (!data.empty()) {
        size_t n = std::min<size_t>(data.size(), UINT32_MAX);
        char h[kHeaderSize];
        put_header(h, Header{static_cast<uint32_t>(n), Frame::data, 0, 0});
        out.append(h, sizeof h);
        if (n == data.size()) {
            out.append(data);
        } else {
            Buffer part;
            evbuffer_remove_buffer(data.raw(), part.raw(), n);
            out.append(part);
        }
    }
}

void Link::frame_end(Buffer &out) { put_frame(out, Frame::end, 0, 0, std::string(), nullptr, 0); }

bool Link::pump(Buffer &out)
{
    for (const Request &r : read_requests_) put_frame(out, Frame::read_req, 0, r.tag, r.fields, nullptr, 0);
    read_requests_.clear();
    while (!turns_.empty() && out.size() < kPumpLow) {
        Turn t = turns_.front();
        turns_.pop_front();
        size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, t.len - t.done));
        if (t.serve_read) {
            auto e = exposures_.find(t.id);
            if (e == exposures_.end()) { // revoked (or dropped) while being read: cut off
                answer(out, Frame::read_done, t.tag, -TW_EREMOTEACCESS, "the exposure was revoked during the read");
                --serving_;
                continue;
            }
            std::string fields;
            put_u64(fields, t.done);
            put_frame(out, Frame::read_data, 0, t.tag, fields, e->second.data + t.offset + t.done, n);
            t.done += n;
            if (t.done == t.len) {
                answer(out, Frame::read_done, t.tag, 0, "");
                --serving_;
            } else {
                turns_.push_back(t);
            }
        } else {
            auto op = ops_.find(t.tag);
            if (op == ops_.end()) continue; // failed or dropped meanwhile
            std::string fields;
            put_u64(fields, op->second.desc.id);
            put_u64(fields, op->second.desc.key);
            put_u64(fields, t.offset + t.done);
            bool last = t.done + n == t.len;
            put_frame(out, Frame::write_data, last ? kLast : 0, t.tag, fields, op->second.local + t.done, n);
            t.done += n;
            if (!last) turns_.push_back(t);
        }
    }
    return !turns_.empty();
}

uint64_t Link::expose(void *data, size_t len, uint32_t access, std::string *descriptor)
{
    uint64_t id = next_id_++;
    Exposure e{static_cast<char *>(data), len, access, random_key()};
    exposures_.emplace(id, e);
    *descriptor = encode(Descriptor{id, e.key, len, access});
    return id;
}

bool Link::revoke(uint64_t id) { return exposures_.erase(id) != 0; }

int Link::post(uint32_t op, const std::string &descriptor, uint64_t offset, void *local, size_t len, RmaCallback done,
               std::string *why)
{
    Descriptor d;
    if (!decode(descriptor, &d, why)) return -EINVAL;
    if (!len || !local || !done) {
        *why = !len ? "an empty transfer" : !local ? "no local buffer" : "no completion callback";
        return -EINVAL;
    }
    uint32_t mode = op == TW_RMA_OP_READ ? TW_RMA_READ : TW_RMA_WRITE;
    // The exposing side checks everything again; this only fails early.
    if (!(d.access & mode)) {
        *why = std::string("the descriptor does not allow ") + (mode == TW_RMA_READ ? "reading" : "writing");
        return -TW_EREMOTEACCESS;
    }
    if (offset > d.len || len > d.len - offset) {
        *why = "bytes " + std::to_string(offset) + ".." + std::to_string(offset + len) +
               " are outside the exposure's " + std::to_string(d.len);
        return -EINVAL;
    }
    // This side's own transfers; the reads it serves have their own bound.
    if (ops_.size() >= kMaxTurns) {
        *why = "more than " + std::to_string(kMaxTurns) + " transfers in flight";
        return -EAGAIN;
    }
    uint64_t tag = next_tag_++;
    ops_.emplace(tag, Op{op, static_cast<char *>(local), len, 0, d, std::move(done)});
    if (op == TW_RMA_OP_WRITE) {
        turns_.push_back(Turn{false, tag, d.id, offset, len});
    } else {
        // A read is one request; the peer sends the data in its own turns.
        std::string fields;
        put_u64(fields, d.id);
        put_u64(fields, d.key);
        put_u64(fields, offset);
        put_u64(fields, len);
        read_requests_.push_back(Request{tag, std::move(fields)});
    }
    return 0;
}

std::vector<std::function<void()>> Link::take_completions()
{
    std::vector<std::function<void()>> out;
    out.swap(completions_);
    return out;
}

void Link::fail_all(std::error_code code, const std::string &reason)
{
    for (auto &entry : ops_) {
        RmaCallback cb = std::move(entry.second.done);
        completions_.push_back([cb, code, reason] { cb(code, reason); });
    }
    forget_peer();
}

void Link::drop_all()
{
    forget_peer();
    completions_.clear();
}

// The connection is over (or closing): nothing of the peer is read again,
// so its bytes and this side's tables go now, not with the Connection
// (which an application may keep long after).
void Link::forget_peer()
{
    ops_.clear();
    turns_.clear();
    serving_ = 0;
    read_requests_.clear();
    exposures_.clear();
    refused_writes_.clear();
    wire_in_.clear();
    std::vector<char>().swap(frame_);
    data_left_ = 0;
    held_ = false;
}

} // namespace twinwire::rma
