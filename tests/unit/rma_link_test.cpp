// SPDX-License-Identifier: MIT
// The RMA emulation's link (framework/src/rma_link.hpp) fed frames by hand,
// as a hostile peer on the same connection would send them: the exposing
// side's checks at their exact boundaries, keys forged for an id this
// connection has, the hello's reasons, data frames of any declared length,
// the end frame, and answers held while the output is full.
#include "rma_frames.hpp"
#include "rma_link.hpp"
#include "rma_wire.hpp"

#include <twinwire/transport.h>

#include <catch2/catch.hpp>

#include <cstring>

using namespace twinwire;
using namespace twinwire::rma;
using namespace twtest::rma_frames;

namespace {

struct Answer {
    Frame type = Frame::data;
    uint64_t tag = 0;
    int status = 0;
    std::string reason; ///< done frames
    std::string bytes;  ///< read_data
};

/// The exposing side: a link past the hello, with `memory` exposed.
struct Exposer {
    Link link;
    Buffer out, input;
    std::string memory = std::string(4096, 'm');
    Descriptor d;
    std::string why;

    explicit Exposer(uint32_t access = TW_RMA_READ | TW_RMA_WRITE)
    {
        std::string desc;
        link.expose(&memory[0], memory.size(), access, &desc);
        REQUIRE(decode(desc, &d, &why));
        REQUIRE(feed(hello()));
    }

    bool feed(const std::string &bytes)
    {
        link.wire_in().append(bytes);
        return link.demux(input, out, &why);
    }

    /// Every answer queued, reads served to the end.
    std::vector<Answer> answers()
    {
        while (link.pump(out)) {
        }
        std::vector<Answer> got;
        char hb[kHeaderSize];
        while (out.peek(hb, sizeof hb) == sizeof hb) {
            Header h = get_header(hb);
            out.drain(kHeaderSize);
            std::string p = out.take(h.len);
            Answer a;
            a.type = h.type;
            a.tag = h.tag;
            if (h.type == Frame::read_data) a.bytes = p.substr(8);
            else if (p.size() >= 4) a.status = static_cast<int>(get_u32(p.data())), a.reason = p.substr(4);
            got.push_back(a);
        }
        return got;
    }

    /// The status the read or write `tag` ended with (1: no answer).
    int status_of(uint64_t tag)
    {
        int status = 1;
        for (const Answer &a : answers())
            if (a.tag == tag && (a.type == Frame::read_done || a.type == Frame::write_done)) status = a.status;
        return status;
    }
};

} // namespace

TEST_CASE("the exposing side serves an access that ends exactly at the exposure's end and refuses one byte more",
          "[rma-link]")
{
    Exposer e;
    struct Case {
        uint64_t offset, len;
        bool ok;
    };
    const Case cases[] = {
        {0, 4096, true},  {0, 4097, false}, {4095, 1, true},  {4095, 2, false},
        {4096, 1, false}, {1, 4096, false}, {4000, 96, true}, {4000, 97, false},
    };
    uint64_t tag = 1;
    for (const Case &c : cases) {
        INFO("read of " << c.len << " bytes at " << c.offset);
        REQUIRE(e.feed(read_req(tag, e.d.id, e.d.key, c.offset, c.len)));
        int st = e.status_of(tag++);
        CHECK(st == (c.ok ? 0 : -TW_EREMOTEACCESS));
    }
    for (const Case &c : cases) {
        INFO("write of " << c.len << " bytes at " << c.offset);
        const std::string before = e.memory;
        REQUIRE(e.feed(write_data(tag, e.d.id, e.d.key, c.offset, std::string(c.len, 'W'))));
        int st = e.status_of(tag++);
        CHECK(st == (c.ok ? 0 : -TW_EREMOTEACCESS));
        if (c.ok) CHECK(e.memory.compare(c.offset, c.len, std::string(c.len, 'W')) == 0);
        else CHECK(e.memory == before);
        e.memory.assign(4096, 'm');
    }
    // An empty write at the very end is inside; one byte past it is not.
    REQUIRE(e.feed(write_data(tag, e.d.id, e.d.key, 4096, "")));
    CHECK(e.status_of(tag++) == 0);
    REQUIRE(e.feed(write_data(tag, e.d.id, e.d.key, 4097, "")));
    CHECK(e.status_of(tag++) == -TW_EREMOTEACCESS);
}

TEST_CASE("offsets and lengths near 2^64 are refused: offset + length never wraps into the exposure", "[rma-link]")
{
    Exposer e;
    const uint64_t max = UINT64_MAX;
    const std::pair<uint64_t, uint64_t> cases[] = {
        {max, 1}, {max, max}, {max - 4095, 4096}, {1, max}, {4096, max - 4095}, {4095, max}, {max - 1, 2},
    };
    uint64_t tag = 1;
    for (auto [offset, len] : cases) {
        INFO("offset " << offset << " length " << len);
        REQUIRE(e.feed(read_req(tag, e.d.id, e.d.key, offset, len)));
        CHECK(e.status_of(tag++) == -TW_EREMOTEACCESS);
        // A write's length is its payload (here 1 byte): its offset is past the end.
        if (offset < 4096) continue;
        REQUIRE(e.feed(write_data(tag, e.d.id, e.d.key, offset, "w")));
        CHECK(e.status_of(tag++) == -TW_EREMOTEACCESS);
    }
    CHECK(e.memory == std::string(4096, 'm'));
}

TEST_CASE("a forged key for an id this connection has is refused, reads and writes, and touches nothing", "[rma-link]")
{
    Exposer e;
    // A second exposure on the same link: ids are sequential, so a peer
    // that holds one descriptor knows the other's id; only the key guards it.
    std::string other(4096, 'o'), desc;
    uint64_t other_id = e.link.expose(&other[0], other.size(), TW_RMA_READ | TW_RMA_WRITE, &desc);
    REQUIRE(other_id == e.d.id + 1);
    const uint64_t forged_keys[] = {e.d.key, e.d.key ^ 1, e.d.key + 1, 0, UINT64_MAX};
    uint64_t tag = 1;
    for (uint64_t key : forged_keys) {
        INFO("key " << key << " for id " << other_id);
        REQUIRE(e.feed(read_req(tag, other_id, key, 0, 16)));
        auto got = e.answers();
        REQUIRE(got.size() == 1); // the refusal alone: no read_data
        CHECK(got[0].type == Frame::read_done);
        CHECK(got[0].status == -TW_EREMOTEACCESS);
        CHECK(got[0].reason.find("no such exposure") != std::string::npos);
        ++tag;
        REQUIRE(e.feed(write_data(tag, other_id, key, 0, "forged")));
        CHECK(e.status_of(tag++) == -TW_EREMOTEACCESS);
    }
    CHECK(other == std::string(4096, 'o'));
    // The real key of that id still works.
    Descriptor od;
    REQUIRE(decode(desc, &od, &e.why));
    REQUIRE(e.feed(read_req(tag, other_id, od.key, 0, 16)));
    CHECK(e.status_of(tag) == 0);
}

TEST_CASE("each hello mismatch gets its own reason, however the bytes are cut into reads", "[rma-link]")
{
    const std::string good = hello();
    REQUIRE(good.size() == 24);
    auto with = [&](size_t at, const std::string &bytes) {
        return good.substr(0, at) + bytes + good.substr(at + bytes.size());
    };
    std::string v2 = good, v0 = good;
    v2[20] = 2;
    v0[20] = 0;
    std::string tagged = good;
    tagged[8] = 5;
    std::string flagged = good;
    flagged[5] = 1;
    std::string magic = good;
    magic[17] ^= 0x20;
    std::string typed = good;
    typed[4] = static_cast<char>(Frame::data);
    struct Case {
        std::string bytes;
        std::string reason;
    };
    const Case cases[] = {
        {v2, "the peer speaks RMA emulation version 2, this side 1"},
        {v0, "the peer speaks RMA emulation version 0, this side 1"},
        {with(20, std::string("\xff\xff\xff\xff", 4)), "the peer speaks RMA emulation version 4294967295, this side 1"},
        {tagged, "the peer's RMA hello is malformed: flags 0, reserved 0, tag 5 (a hello has them all 0)"},
        {flagged, "the peer's RMA hello is malformed: flags 1, reserved 0, tag 0 (a hello has them all 0)"},
        {magic, "the peer did not enable RMA"},
        {typed, "the peer did not enable RMA"},
        {"*1\r\n$4\r\nPING\r\n", "the peer did not enable RMA"},
        {"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "the peer did not enable RMA"},
    };
    for (const Case &c : cases) {
        for (size_t piece : {c.bytes.size(), size_t(1), size_t(7)}) {
            INFO("hello " << Catch::Detail::stringify(c.bytes) << " in pieces of " << piece);
            Link link;
            Buffer input, out;
            std::string why;
            bool ok = true;
            for (size_t at = 0; ok && at < c.bytes.size(); at += piece) {
                link.wire_in().append(c.bytes.substr(at, piece));
                ok = link.demux(input, out, &why);
            }
            CHECK_FALSE(ok);
            CHECK(why.compare(0, c.reason.size(), c.reason) == 0);
            CHECK(input.empty());
        }
    }
    // A raw stream is told at its first byte, not after 24.
    Link link;
    Buffer input, out;
    std::string why;
    link.wire_in().append("+");
    CHECK_FALSE(link.demux(input, out, &why));
    // The good hello, byte by byte, is accepted.
    Link ok_link;
    for (char ch : good) {
        ok_link.wire_in().append(&ch, 1);
        REQUIRE(ok_link.demux(input, out, &why));
    }
    ok_link.wire_in().append(frame(Frame::data, 0, 0, "after"));
    REQUIRE(ok_link.demux(input, out, &why));
    CHECK(input.take(input.size()) == "after");
}

TEST_CASE("a data frame declaring 4 GiB reaches the application as it arrives; the link keeps no more than a frame",
          "[rma-link]")
{
    Exposer e;
    std::string header = frame(Frame::data, 0, 0, "");
    uint32_t huge = UINT32_MAX;
    std::memcpy(&header[0], &huge, 4);
    REQUIRE(e.feed(header));
    size_t delivered = 0;
    for (int i = 0; i < 64; ++i) {
        REQUIRE(e.feed(std::string(1 << 20, 'x')));
        delivered += e.input.size();
        e.input.clear(); // the application takes its bytes
        CHECK(e.link.wire_in().size() == 0);
    }
    CHECK(delivered == size_t(64) << 20);
    CHECK(e.link.buffered() <= kHeaderSize + kMaxPayload);
    // Frames of any other type are refused at their header.
    Exposer f;
    std::string big = frame(Frame::read_data, 0, 1, "");
    std::memcpy(&big[0], &huge, 4);
    CHECK_FALSE(f.feed(big));
    CHECK(f.why.find("more than the 65600 any frame carries") != std::string::npos);
}

TEST_CASE("after the peer's end frame, stream bytes and a second end are protocol errors; its RMA goes on",
          "[rma-link]")
{
    Exposer e;
    REQUIRE(e.feed(frame(Frame::data, 0, 0, "before\n") + frame(Frame::end, 0, 0, "")));
    CHECK(e.link.peer_ended());
    CHECK(e.input.take(e.input.size()) == "before\n");
    REQUIRE(e.feed(read_req(1, e.d.id, e.d.key, 0, 8))); // RMA after the end: still served
    CHECK(e.status_of(1) == 0);
    SECTION("a data frame")
    {
        CHECK_FALSE(e.feed(frame(Frame::data, 0, 0, "after\n")));
        CHECK(e.why == "stream bytes after the peer's end of stream (a data frame of 6 bytes after its end frame)");
    }
    SECTION("an empty data frame")
    {
        CHECK_FALSE(e.feed(frame(Frame::data, 0, 0, "")));
        CHECK(e.why.find("after its end frame") != std::string::npos);
    }
    SECTION("a second end frame")
    {
        CHECK_FALSE(e.feed(frame(Frame::end, 0, 0, "")));
        CHECK(e.why == "a second end frame (the peer's stream had already ended)");
    }
    CHECK(e.input.empty());
}

TEST_CASE("requests wait while the output holds the limit: answers never pass it by more than one", "[rma-link]")
{
    Exposer e;
    const size_t limit = 4096;
    std::string burst;
    for (uint64_t tag = 1; tag <= 1000; ++tag) {
        burst += read_req(tag, 999, 0, 0, 8);                         // refused: no such exposure
        burst += write_data(100000 + tag, 999, 0, 0, "");             // refused final write
        burst += write_data(200000 + tag, e.d.id, e.d.key, 4096, ""); // a valid empty write
        burst += frame(Frame::data, 0, 0, "s");
    }
    e.link.wire_in().append(burst);
    size_t answered = 0, stream = 0;
    int rounds = 0;
    for (;;) {
        REQUIRE(e.link.demux(e.input, e.out, limit, &e.why));
        CHECK(e.out.size() < limit + 16 + 4 + 200);
        stream += e.input.size();
        e.input.clear();
        if (!e.link.held()) break;
        CHECK(e.link.wire_in().size() > 0);
        answered += e.answers().size(); // the peer reads them
        e.link.release();
        ++rounds;
    }
    answered += e.answers().size();
    CHECK(rounds > 10);
    CHECK(answered == 3000);
    CHECK(stream == 1000);
    CHECK(e.link.wire_in().size() == 0);
}
