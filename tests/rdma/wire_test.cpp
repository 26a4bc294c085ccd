// SPDX-License-Identifier: MIT
// rdma-wire-tests: the plugin's pure pieces, no device needed - the wire
// format's validation, the rdma.* settings and the error texts.
#include <catch2/catch.hpp>

#include "port_links.hpp"
#include "report.hpp"
#include "settings.hpp"
#include "wire.hpp"

#include <twinwire/errors.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <endian.h>

#include <cstring>
#include <map>
#include <string>

using namespace twrdma;

namespace {

WireHello good_hello()
{
    WireHello h{};
    h.magic = kHelloMagic;
    h.proto_min = kProtoMin;
    h.proto_max = kProtoMax;
    h.ring_size = 131072;
    h.recv_depth = 64;
    h.credit_reserve = 4;
    return h;
}

std::string check_hello(const WireHello &h)
{
    WireHello wire = hello_to_wire(h), out{};
    return hello_from_wire(&wire, sizeof wire, &out);
}

std::map<std::string, std::string> g_config;

const char *fake_config_get(const tw_host *, const char *key, const char **origin)
{
    if (origin) *origin = "test.conf:1";
    auto it = g_config.find(key);
    return it == g_config.end() ? nullptr : it->second.c_str();
}

std::string load(const std::map<std::string, std::string> &config, Settings *out = nullptr)
{
    g_config = config;
    tw_host host{};
    host.size = sizeof host;
    host.version = TW_HOST_VERSION;
    host.config_get = fake_config_get;
    Settings s;
    std::string why;
    int rc = load_settings(&host, &s, &why);
    if (out) *out = s;
    return rc == 0 ? "" : why;
}

} // namespace

TEST_CASE("a valid hello survives the trip to the wire and back", "[wire]")
{
    WireHello h = good_hello();
    WireHello wire = hello_to_wire(h), out{};
    REQUIRE(hello_from_wire(&wire, sizeof wire, &out) == "");
    CHECK(out.ring_size == h.ring_size);
    CHECK(out.recv_depth == 64);
    CHECK(be32toh(wire.magic) == kHelloMagic); // big-endian on the wire
}

TEST_CASE("a malformed hello is refused with the reason", "[wire]")
{
    WireHello h = good_hello();
    CHECK(hello_from_wire(nullptr, 0, &h).find("no twinwire hello") != std::string::npos);
    h = good_hello();
    h.magic = 1;
    CHECK(check_hello(h).find("bad magic") != std::string::npos);
    h = good_hello();
    h.proto_min = kProtoMax + 1;
    CHECK(check_hello(h).find("version range") != std::string::npos);
    h = good_hello();
    h.features = 0x80;
    CHECK(check_hello(h).find("unknown features") != std::string::npos);
    {
        // The reject says which: unknown features, or a malformed hello.
        WireHello wire = hello_to_wire(h), out{};
        RejectReason reason{};
        hello_from_wire(&wire, sizeof wire, &out, &reason);
        CHECK(reason == RejectReason::Features);
        h = good_hello();
        h.magic = 1;
        wire = hello_to_wire(h);
        hello_from_wire(&wire, sizeof wire, &out, &reason);
        CHECK(reason == RejectReason::BadHello);
    }
    h = good_hello();
    h.ring_size = 5000;
    CHECK(check_hello(h).find("ring size") != std::string::npos);
    h = good_hello();
    h.credit_reserve = 40;
    CHECK(check_hello(h).find("bad credits") != std::string::npos);
}

TEST_CASE("protocol versions negotiate to the highest common one, or none", "[wire]")
{
    WireHello h = good_hello();
    h.proto_min = 1;
    h.proto_max = 3;
    CHECK(negotiate(h, 1, 2) == 2);
    h.proto_min = 3;
    CHECK(negotiate(h, 1, 2) == 0);
}

TEST_CASE("a twinwire reject carries its reason and text; anything else is not one", "[wire]")
{
    WireReject r = reject_make(RejectReason::PoolExhausted, "server: pool exhausted");
    RejectReason reason{};
    std::string text;
    REQUIRE(reject_from_wire(&r, sizeof r, &reason, &text));
    CHECK(reason == RejectReason::PoolExhausted);
    CHECK(text == "server: pool exhausted");
    char zeros[148] = {};
    CHECK_FALSE(reject_from_wire(zeros, sizeof zeros, &reason, &text));
    CHECK_FALSE(reject_from_wire(&r, 10, &reason, &text));
}

TEST_CASE("control messages are validated field by field", "[wire]")
{
    WireCtrl c{};
    c.version = 1;
    c.type = static_cast<uint8_t>(Ctrl::Credit);
    c.credits = 7;
    c.consumed = 1ull << 40;
    WireCtrl wire = ctrl_to_wire(c), out{};
    REQUIRE(ctrl_from_wire(&wire, sizeof wire, 1, &out) == "");
    CHECK(out.credits == 7);
    CHECK(out.consumed == (1ull << 40));
    CHECK(ctrl_from_wire(&wire, 31, 1, &out).find("31 bytes") != std::string::npos);
    CHECK(ctrl_from_wire(&wire, sizeof wire, 2, &out).find("version") != std::string::npos);
    WireCtrl bad = wire;
    bad.magic = 0;
    CHECK(ctrl_from_wire(&bad, sizeof bad, 1, &out).find("magic") != std::string::npos);
    bad = wire;
    bad.type = 9;
    CHECK(ctrl_from_wire(&bad, sizeof bad, 1, &out).find("unknown type") != std::string::npos);
    bad = wire;
    bad.reserved = 1;
    CHECK(ctrl_from_wire(&bad, sizeof bad, 1, &out).find("reserved") != std::string::npos);
    // No header carries an rkey: RING's keys (one per ring segment) follow
    // its header, and RING is exactly a header plus those keys.
    bad = wire;
    bad.rkey = 1;
    CHECK(ctrl_from_wire(&bad, sizeof bad, 1, &out).find("rkey") != std::string::npos);
    WireCtrl ring{};
    ring.version = 1;
    ring.type = static_cast<uint8_t>(Ctrl::Ring);
    ring.sent = 0x7f0000001000ull;
    uint32_t keys[kRingSegments], back[kRingSegments] = {};
    for (uint32_t i = 0; i < kRingSegments; ++i) keys[i] = 0x1234ab00u + (i << 8) + i;
    WireRing rwire = ring_to_wire(ring, keys);
    REQUIRE(ctrl_from_wire(&rwire, sizeof rwire, 1, &out) == "");
    CHECK(out.sent == 0x7f0000001000ull);
    ring_keys_from_wire(&rwire, back);
    for (uint32_t i = 0; i < kRingSegments; ++i) CHECK(back[i] == keys[i]);
    CHECK(ctrl_from_wire(&rwire, sizeof(WireCtrl), 1, &out).find("expected 64") != std::string::npos);
    CHECK(ctrl_from_wire(&wire, sizeof(WireRing), 1, &out).find("expected 32") != std::string::npos);
    // A segment's key advances its low byte by one per lap of the ring.
    CHECK(segment_rkey(0x1234abff, 0) == 0x1234abff);
    CHECK(segment_rkey(0x1234abff, 1) == 0x1234ab00);
    CHECK(segment_rkey(0x1234ab10, 3) == 0x1234ab13);
    CHECK(std::string(ctrl_name(5)) == "RING");
    CHECK(std::string(ctrl_name(6)) == "RESIZE");
    CHECK(std::string(ctrl_name(7)) == "RESIZE_ACK");
    CHECK(std::string(ctrl_name(2)) == "SHUTDOWN");
    CHECK(std::string(ctrl_name(4)) == "KEEPALIVE_ACK");
    CHECK(std::string(ctrl_name(3)) == "KEEPALIVE");
    CHECK(std::string(ctrl_name(1)) == "CREDIT");
    CHECK(std::string(ctrl_name(0)) == "UNKNOWN");
}

TEST_CASE("the data immediate packs type, credits and length", "[wire]")
{
    Imm imm = imm_decode(imm_encode(63, kImmMaxLen));
    CHECK(imm.type == kImmTypeData);
    CHECK(imm.credits == 63);
    CHECK(imm.len == kImmMaxLen);
    imm = imm_decode(imm_encode(5, 4096, kImmTypeDataMore));
    CHECK(imm.type == kImmTypeDataMore);
    CHECK(imm.credits == 5);
    CHECK(imm.len == 4096);
}

TEST_CASE("RESIZE and RESIZE_ACK exist from version 4 on; RESIZE carries the ring's size, address and keys", "[wire]")
{
    WireCtrl m{};
    m.version = 4;
    m.type = static_cast<uint8_t>(Ctrl::Resize);
    m.rkey = 1u << 20;
    m.sent = 0x7f0000200000ull;
    uint32_t keys[kRingSegments], back[kRingSegments] = {};
    for (uint32_t i = 0; i < kRingSegments; ++i) keys[i] = 0x5600ab00u + (i << 8);
    WireRing wire = ring_to_wire(m, keys);
    WireCtrl out{};
    REQUIRE(ctrl_from_wire(&wire, sizeof wire, 4, &out) == "");
    CHECK(out.type == static_cast<uint8_t>(Ctrl::Resize));
    CHECK(out.rkey == (1u << 20));
    CHECK(out.sent == 0x7f0000200000ull);
    ring_keys_from_wire(&wire, back);
    for (uint32_t i = 0; i < kRingSegments; ++i) CHECK(back[i] == keys[i]);
    // RESIZE is a header plus keys; a version 3 connection knows neither type.
    CHECK(ctrl_from_wire(&wire, sizeof(WireCtrl), 4, &out).find("expected 64") != std::string::npos);
    wire.head.version = 3;
    CHECK(ctrl_from_wire(&wire, sizeof wire, 3, &out).find("unknown type 6") != std::string::npos);

    WireCtrl ack{};
    ack.version = 4;
    ack.type = static_cast<uint8_t>(Ctrl::ResizeAck);
    ack.sent = 123456;
    WireCtrl ack_wire = ctrl_to_wire(ack);
    REQUIRE(ctrl_from_wire(&ack_wire, sizeof ack_wire, 4, &out) == "");
    CHECK(out.sent == 123456);
    ack.version = 3;
    ack_wire = ctrl_to_wire(ack);
    CHECK(ctrl_from_wire(&ack_wire, sizeof ack_wire, 3, &out).find("unknown type 7") != std::string::npos);
    // Only RESIZE puts a value in the rkey field.
    ack.version = 4;
    ack.rkey = 7;
    ack_wire = ctrl_to_wire(ack);
    CHECK(ctrl_from_wire(&ack_wire, sizeof ack_wire, 4, &out).find("rkey") != std::string::npos);
    // Both ends speak 3 and 4: either meets an older peer at 3.
    WireHello old{};
    old.proto_min = 3;
    old.proto_max = 3;
    CHECK(negotiate(old, kProtoMin, kProtoMax) == 3);
    old.proto_max = 4;
    CHECK(negotiate(old, kProtoMin, kProtoMax) == 4);
}

TEST_CASE("sizes parse with binary units and refuse anything else", "[settings]")
{
    uint64_t v = 0;
    CHECK((parse_size("64k", &v) && v == 65536));
    CHECK((parse_size("8M", &v) && v == (8u << 20)));
    CHECK((parse_size("1GiB", &v) && v == (1u << 30)));
    CHECK((parse_size("4096", &v) && v == 4096));
    CHECK_FALSE(parse_size("", &v));
    CHECK_FALSE(parse_size("-1", &v));
    CHECK_FALSE(parse_size("12q", &v));
    CHECK_FALSE(parse_size("1kx", &v));
}

TEST_CASE("every rdma.* key is read, and bad values name key, value and origin", "[settings]")
{
    Settings s;
    CHECK(load({}, &s) == "");
    CHECK(s.ring_size == 4 * 1024);
    CHECK(s.send_buffer_size == 2 * 1024);
    // An idle connection holds at most 8 KiB: its block and its share of
    // the shared receive queue (issue 41).
    CHECK(s.idle_connection_bytes() == s.block_size() + s.recv_depth * kRecvBufSize);
    CHECK(s.idle_connection_bytes() <= 8 * 1024);
    // Rings start small and may grow to 16 MiB; a start above the default
    // maximum raises it, a maximum of 0 turns growth off, an explicit
    // maximum below the start is refused.
    CHECK(s.ring_max == (16u << 20));
    CHECK(s.send_buffer_max == (16u << 20));
    CHECK(load({{"rdma.ring_size", "32M"}}, &s) == "");
    CHECK(s.ring_max == (32u << 20));
    CHECK(load({{"rdma.ring_size", "128k"}, {"rdma.ring_max", "0"}, {"rdma.send_buffer_max", "0"}}, &s) == "");
    CHECK(s.ring_max == 128 * 1024);
    CHECK(s.send_buffer_max == 2 * 1024);
    std::string small = load({{"rdma.send_buffer_size", "1M"}, {"rdma.send_buffer_max", "64k"}});
    CHECK(small.find("rdma.send_buffer_max = 65536 (test.conf:1) is smaller than rdma.send_buffer_size") !=
          std::string::npos);
    CHECK(load({{"rdma.ring_max", "3M"}}).find("power of two") != std::string::npos);
    CHECK(load({{"rdma.ring_idle_ms", "5"}}).find("between 10 and") != std::string::npos);
    CHECK(load({{"rdma.ring_size", "1M"}, {"rdma.device", "rxe0"}, {"rdma.gid_index", "1"}}, &s) == "");
    CHECK(s.ring_size == (1u << 20));
    CHECK(s.device == "rxe0");
    CHECK(s.gid_index == 1);

    std::string why = load({{"rdma.ring_size", "100k"}});
    CHECK(why.find("rdma.ring_size = 100k (test.conf:1)") != std::string::npos);
    CHECK(why.find("power of two") != std::string::npos);
    CHECK(load({{"rdma.ring_size", "lots"}}).find("expected a size") != std::string::npos);
    CHECK(load({{"rdma.ring_size", "1k"}}).find("between") != std::string::npos);
    CHECK(load({{"rdma.recv_depth", "x"}}).find("expected an integer") != std::string::npos);
    CHECK(load({{"rdma.rnr_retry", "7"}}).find("between 0 and 6") != std::string::npos);
    CHECK(load({{"rdma.gid_index", "-2"}}).find("rdma.gid_index") != std::string::npos);
    CHECK(load({{"rdma.control_credits", "40"}}).find("at most half") != std::string::npos);
    CHECK(load({{"rdma.pool_size", "16M"}, {"rdma.pool_max", "8M"}}).find("smaller than") != std::string::npos);
    CHECK(load({{"rdma.keepalive_ms", "5000"}, {"rdma.dead_peer_ms", "4000"}}).find("larger than") !=
          std::string::npos);
    CHECK(load({{"rdma.ring_size", "128M"}, {"rdma.pool_size", "64k"}, {"rdma.pool_max", "64M"}})
              .find("cannot hold one connection") != std::string::npos);
}

TEST_CASE("rdma.rma_max_transfer defaults to the port's limit (0) and takes 4 KiB to 2 GiB", "[settings]")
{
    Settings s;
    CHECK(load({}, &s) == "");
    CHECK(s.rma_max_transfer == 0);
    CHECK(load({{"rdma.rma_max_transfer", "1M"}}, &s) == "");
    CHECK(s.rma_max_transfer == (1u << 20));
    CHECK(load({{"rdma.rma_max_transfer", "1k"}}).find("rdma.rma_max_transfer = 1k") != std::string::npos);
    CHECK(load({{"rdma.rma_max_transfer", "4G"}}).find("between") != std::string::npos);
}

TEST_CASE("failure texts name the call, the errno or status, and a hint", "[report]")
{
    std::string t = call_failed("rdma_resolve_addr", ENODEV);
    CHECK(t.find("rdma_resolve_addr") != std::string::npos);
    CHECK(t.find("errno 19") != std::string::npos);
    CHECK(t.find("hint:") != std::string::npos);
    for (int err : {ENOMEM, EADDRNOTAVAIL, EADDRINUSE, EACCES, EPERM, ETIMEDOUT, ECONNREFUSED, EINVAL})
        CHECK(call_failed("x", err).find("hint:") != std::string::npos);
    CHECK(call_failed("x", 0) == "x: failed");
    CHECK(call_failed("x", E2BIG).find("hint") == std::string::npos);
    CHECK(call_failed("x", E2BIG, "do this").find("hint: do this") != std::string::npos);

    ibv_wc wc{};
    wc.status = IBV_WC_RETRY_EXC_ERR;
    std::string w = wc_failed(wc, "RDMA_WRITE");
    CHECK(w.find("RDMA_WRITE") != std::string::npos);
    CHECK(w.find("status 12") != std::string::npos);
    CHECK(w.find("hint:") != std::string::npos);
    for (ibv_wc_status st : {IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, IBV_WC_LOC_LEN_ERR,
                             IBV_WC_LOC_PROT_ERR})
        CHECK(*wc_hint(st) != '\0');
    CHECK(*wc_hint(IBV_WC_GENERAL_ERR) == '\0');
    wc.status = IBV_WC_GENERAL_ERR;
    CHECK(wc_failed(wc, "RECV").find("hint") == std::string::npos);

    CHECK(human_bytes(128 * 1024) == "128 KiB");
    CHECK(human_bytes(8u << 20) == "8 MiB");
    CHECK(human_bytes(1u << 30) == "1 GiB");
    CHECK(human_bytes(1000) == "1000 bytes");
    CHECK(format("%s-%d", "a", 1) == "a-1");
    CHECK(format("%0300d", 1).size() == 300);
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(7379);
    in.sin_addr.s_addr = htonl(0x0a4d0002);
    CHECK(sockaddr_text(reinterpret_cast<sockaddr *>(&in)) == "10.77.0.2:7379");
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(1);
    in6.sin6_addr.s6_addr[15] = 1;
    CHECK(sockaddr_text(reinterpret_cast<sockaddr *>(&in6)) == "[::1]:1");
    CHECK(sockaddr_text(nullptr) == "?");
}

TEST_CASE("a port's link is named as ibv_devinfo names it: lane speed, width and their product", "[links]")
{
    CHECK(link_rate_text(2, 32) == "speed 25.0 Gb/s (EDR) width 4X (100.0 Gb/s)");
    CHECK(link_rate_text(1, 1) == "speed 2.5 Gb/s (SDR) width 1X (2.5 Gb/s)");
    CHECK(link_rate_text(16, 64) == "speed 50.0 Gb/s (HDR) width 2X (100.0 Gb/s)");
    CHECK(link_rate_text(3, 200) == "speed unknown (200) width unknown (3)");
}

TEST_CASE("a GID's netdev is named with every address it holds, as rdma_cm users look them up", "[links]")
{
    CHECK(netdev_text(0) == "");
    unsigned lo = if_nametoindex("lo");
    if (lo == 0) {
        WARN("not checked: this host has no loopback interface");
        return;
    }
    std::string text = netdev_text(lo);
    INFO(text);
    CHECK(text.find("lo ") == 0);
    CHECK(text.find(" 127.0.0.1/8") != std::string::npos);
}
