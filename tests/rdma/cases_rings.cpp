// SPDX-License-Identifier: MIT
// Adaptive rings (rdma.ring_max, rdma.send_buffer_max; 0 turns it off): a
// connection starts on small rings, grows them while its stream waits for
// them (in-band RESIZE, protocol version 4), and returns to the small ones
// after rdma.ring_idle_ms.  Sizes come from the plugin's
// own counters (TW_RDMA_CTRL_GET_RINGS, TW_CTRL_GET_TRANSPORT_STATS).
#include "rdma_test.hpp"

#include <twinwire/rdma.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t kGrownLimit = 64 * 1024; // a connection back from a burst, with its adaptive rings (issue 14)
constexpr uint64_t kIdleLimit = 8 * 1024;   // an idle connection at the default settings (issue 41)

/// Small rings that may grow to 1 MiB, and `extra`.
std::map<std::string, std::string> adaptive(std::map<std::string, std::string> extra = {})
{
    extra.insert({{"rdma.ring_size", "32k"},
                  {"rdma.send_buffer_size", "16k"},
                  {"rdma.ring_max", "1M"},
                  {"rdma.send_buffer_max", "1M"}});
    return extra;
}

tw_rdma_rings rings_of(Env &env, Endpoint &e)
{
    tw_rdma_rings r{};
    r.size = sizeof r;
    int rc = e.ops().ctrl(env.transport().handle(), e.conn(), TW_RDMA_CTRL_NS, TW_RDMA_CTRL_GET_RINGS, &r, sizeof r);
    if (rc != 0) throw std::runtime_error("TW_RDMA_CTRL_GET_RINGS failed: " + std::to_string(rc));
    return r;
}

std::string describe(const tw_rdma_rings &r)
{
    char line[200];
    std::snprintf(line, sizeof line, "rx %llu, tx %llu, registered %llu, grows %u/%u, shrinks %u/%u",
                  static_cast<unsigned long long>(r.rx_ring), static_cast<unsigned long long>(r.tx_ring),
                  static_cast<unsigned long long>(r.registered), r.rx_grows, r.tx_grows, r.rx_shrinks, r.tx_shrinks);
    return line;
}

/// Registered bytes per open connection end, from the transport's counters.
uint64_t in_use_per_connection(Env &env)
{
    tw_transport_stats st = transport_stats(env);
    return st.connections_open ? st.registered_in_use / st.connections_open : 0;
}

void report(Env &env, const char *when)
{
    tw_transport_stats st = transport_stats(env);
    std::printf("memory %s: %llu connection ends, registered %llu bytes, in use %llu (%llu per connection end)\n", when,
                static_cast<unsigned long long>(st.connections_open),
                static_cast<unsigned long long>(st.registered_bytes),
                static_cast<unsigned long long>(st.registered_in_use),
                static_cast<unsigned long long>(in_use_per_connection(env)));
    std::fflush(stdout);
}

} // namespace

TEST_CASE("rings grow while a stream waits for them, every byte arrives in order, and they shrink back when idle",
          "[rdma][rings]")
{
    use_settings(adaptive({{"rdma.ring_idle_ms", "300"}}));
    Env env;
    Server &server = env.listen();
    server.echo = false;
    Endpoint &client = env.connect(server);
    REQUIRE(env.run_until([&] { return client.failed() || (client.connected && !server.endpoints.empty()); }));
    Endpoint &peer = *server.endpoints[0];
    tw_rdma_rings before = rings_of(env, peer);
    INFO("receiver at the start: " << describe(before));
    CHECK(before.rx_ring == 32 * 1024);
    CHECK(before.registered <= kGrownLimit);

    std::string payload = make_payload(size_t(32) << 20, 14);
    client.send(payload);
    REQUIRE(env.run_until([&] { return client.failed() || peer.failed() || peer.received.size() >= payload.size(); },
                          600s));
    REQUIRE_FALSE(client.failed());
    REQUIRE_FALSE(peer.failed());
    CHECK(checksum(peer.received) == checksum(payload));
    tw_rdma_rings rx = rings_of(env, peer);
    tw_rdma_rings tx = rings_of(env, client);
    INFO("receiver after 32 MiB: " << describe(rx));
    INFO("sender after 32 MiB: " << describe(tx));
    // The sender waited for ring space and the reader kept up: both grew.
    CHECK(rx.rx_grows >= 1);
    CHECK(rx.rx_ring > before.rx_ring);
    CHECK(tx.tx_grows >= 1);
    CHECK(tx.tx_ring > 16 * 1024);

    // Idle for rdma.ring_idle_ms: back to the block's own rings.
    REQUIRE(env.run_until(
        [&] {
            tw_rdma_rings r = rings_of(env, peer), s = rings_of(env, client);
            return r.rx_shrinks >= 1 && r.rx_ring == 32 * 1024 && s.tx_shrinks >= 1 && s.tx_ring == 16 * 1024 &&
                   r.registered <= kGrownLimit && s.registered <= kGrownLimit;
        },
        20s));
    CHECK(in_use_per_connection(env) <= kGrownLimit);

    // The shrunk rings still carry the stream, grown again if need be.
    std::string second = make_payload(size_t(4) << 20, 15);
    client.send(second);
    client.shutdown_after_flush();
    REQUIRE(env.run_until([&] { return client.failed() || peer.failed() || peer.eof; }, 600s));
    CHECK(peer.received.size() == payload.size() + second.size());
    CHECK(checksum(peer.received.substr(payload.size())) == checksum(second));
    CHECK(client.stats().rnr_retries == 0);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("grown rings never take the room of the next slab: a new connection still fits while they are grown",
          "[rdma][rings][pool]")
{
    // Slabs of two 56 KiB blocks.  Unbounded, the server's receive ring
    // would take 128 KiB + 512 KiB + 1 MiB (it keeps the smaller rings as
    // spares until they idle out), 1776 KiB with the first slab: the whole
    // pool, leaving no room for a second slab.
    use_settings(adaptive({{"rdma.pool_size", "112k"}, {"rdma.pool_max", "1792k"}, {"rdma.ring_idle_ms", "60000"}}));
    Env env(2);
    Server &server = env.listen(1, 1); // the server's pool is on loop 1
    server.echo = false;
    Endpoint &streamer = env.connect(server);
    REQUIRE(env.run_until([&] { return streamer.failed() || (streamer.connected && !server.endpoints.empty()); }));
    Endpoint &sink = *server.endpoints[0];
    Endpoint &second = env.connect(server); // the first slab is full now
    REQUIRE(env.run_until([&] { return second.failed() || (second.connected && server.endpoints.size() == 2); }));

    std::string payload = make_payload(size_t(32) << 20, 21);
    streamer.send(payload);
    REQUIRE(env.run_until([&] { return streamer.failed() || sink.failed() || sink.received.size() >= payload.size(); },
                          600s));
    REQUIRE_FALSE(streamer.failed());
    CHECK(checksum(sink.received) == checksum(payload));
    tw_rdma_rings grown = rings_of(env, sink);
    INFO("receiver after 32 MiB: " << describe(grown));
    CHECK(grown.rx_grows >= 1); // growth still happens, within the room left

    // A third connection needs a second slab: it connects and carries data.
    Endpoint &third = env.connect(server);
    REQUIRE(env.run_until([&] { return third.failed() || (third.connected && server.endpoints.size() == 3); }));
    INFO("third: " << third.describe());
    REQUIRE(third.connected);
    third.send("room for me");
    Endpoint &third_peer = *server.endpoints[2];
    REQUIRE(env.run_until([&] { return third_peer.received.size() >= 11 || third_peer.failed(); }));
    CHECK(third_peer.received == "room for me");
    CHECK(third.stats().pool_exhausted == 0);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("a stream both ways over fixed rings arrives intact and counts its holds for window operations",
          "[rdma][rings][windows][links]")
{
    // Across the wire only ([links]): on one device a remote operation
    // completes before the next window operation is due, and nothing holds.
    // Fixed 256 KiB rings: 32 KiB segments, each filled and consumed once
    // per 32 KiB of stream.  Both ends' writes are nearly always in flight,
    // so window operations wait for them and hold the connection's posting
    // (docs/rdma-design.md section 3): window_waits counts each hold once.
    use_settings({{"rdma.ring_size", "256k"},
                  {"rdma.ring_max", "0"},
                  {"rdma.send_buffer_size", "256k"},
                  {"rdma.send_buffer_max", "0"}});
    Env env;
    Server &server = env.listen(); // echoes
    Endpoint &client = env.connect(server);
    std::string payload = make_payload(size_t(16) << 20, 17);
    client.send(payload);
    REQUIRE(env.run_until([&] { return client.failed() || client.received.size() >= payload.size(); }, 600s));
    REQUIRE_FALSE(client.failed());
    REQUIRE(server.endpoints.size() == 1);
    Endpoint &peer = *server.endpoints[0];
    CHECK(checksum(client.received) == checksum(payload));
    const uint64_t segments = payload.size() / (32 * 1024); // filled, and consumed, at each end
    tw_rdma_rings c = rings_of(env, client), p = rings_of(env, peer);
    std::printf("window waits over %llu segments each way: client %llu, server %llu\n",
                static_cast<unsigned long long>(segments), static_cast<unsigned long long>(c.window_waits),
                static_cast<unsigned long long>(p.window_waits));
    std::fflush(stdout);
    CHECK(c.rx_ring == 256 * 1024); // nothing grew
    CHECK(p.rx_ring == 256 * 1024);
    // Each hold ends in window operations for at least one segment filled
    // or consumed, and with this much in flight some must wait.
    for (uint64_t waits : {c.window_waits, p.window_waits}) {
        CHECK(waits >= 1);
        CHECK(waits <= 2 * segments);
    }
    CHECK(client.stats().rnr_retries == 0);

    // A caller built before window_waits passes the shorter struct: filled, nothing written after it.
    unsigned char old[sizeof(tw_rdma_rings) + 8];
    std::memset(old, 0xa5, sizeof old);
    tw_rdma_rings head{};
    head.size = TW_RDMA_RINGS_SIZE_V1;
    std::memcpy(old, &head, sizeof head.size);
    CHECK(client.ops().ctrl(env.transport().handle(), client.conn(), TW_RDMA_CTRL_NS, TW_RDMA_CTRL_GET_RINGS, old,
                            TW_RDMA_RINGS_SIZE_V1) == 0);
    std::memcpy(&head, old, TW_RDMA_RINGS_SIZE_V1);
    CHECK(head.rx_ring == 256 * 1024);
    CHECK(std::count(old + TW_RDMA_RINGS_SIZE_V1, old + sizeof old, 0xa5) == long(sizeof old - TW_RDMA_RINGS_SIZE_V1));
    CHECK(env.rule_violations() == "");
}

TEST_CASE("a peer that does not read cannot make the ring grow: the sender waits instead", "[rdma][rings]")
{
    use_settings(adaptive());
    Env env;
    Server &server = env.listen();
    server.echo = false;
    server.configure = [](Endpoint &e) { e.pause_reading(); };
    Endpoint &client = env.connect(server);
    std::string payload = make_payload(size_t(4) << 20, 16);
    client.send(payload);
    REQUIRE(env.run_until([&] { return client.failed() || !server.endpoints.empty(); }));
    Endpoint &peer = *server.endpoints[0];
    // Long enough for many RESIZE round trips, had the receiver offered any.
    env.run_until([&] { return client.failed(); }, 2s);
    REQUIRE_FALSE(client.failed());
    tw_rdma_rings r = rings_of(env, peer);
    INFO("receiver while not reading: " << describe(r));
    CHECK(r.rx_grows == 0);
    CHECK(r.rx_ring == 32 * 1024);
    CHECK(r.registered <= kGrownLimit);
    CHECK(client.queued() > 0); // the rest waits at the sender
    CHECK(client.stats().credit_stalls > 0);

    peer.resume_reading();
    client.shutdown_after_flush();
    REQUIRE(env.run_until([&] { return client.failed() || peer.failed() || peer.eof; }, 600s));
    CHECK(checksum(peer.received) == checksum(payload));
    CHECK(env.rule_violations() == "");
}

TEST_CASE("1000 idle connections hold at most 8 KiB each, by the counters and by the kernel's count, grow under a "
          "burst and come back down when idle",
          "[rdma][rings][memory]")
{
    constexpr size_t kConns = 1000;
    // The default rings, receives and pool; growth bounded to keep the burst small.
    use_settings({{"rdma.ring_idle_ms", "500"}, {"rdma.ring_max", "1M"}, {"rdma.send_buffer_max", "1M"}});
    const long long mr_at_start = registered_by_this_process();
    Env env;
    Server &server = env.listen();
    std::vector<Endpoint *> clients;
    for (size_t i = 0; i < kConns; i++) clients.push_back(&env.connect(server.address, 120000));
    REQUIRE(env.run_until(
        [&] {
            if (server.accepted < kConns) return false;
            for (Endpoint *c : clients)
                if (!c->failed() && !c->connected) return false;
            return true;
        },
        600s));
    for (Endpoint *c : clients) REQUIRE_FALSE(c->failed());
    report(env, "with 1000 idle connections");
    tw_transport_stats idle = transport_stats(env);
    CHECK(idle.connections_open == 2 * kConns); // both ends are in this process
    CHECK(in_use_per_connection(env) <= kIdleLimit);
    // What the kernel counts (`rdma resource show mr`): every registration
    // of this process, the pools' free blocks and the shared receive
    // queues' spare receives included, per connection end.
    const long long mr = registered_by_this_process();
    std::printf("rdma resource show: %lld bytes registered by this process (%lld before the connections), %lld per "
                "connection end\n",
                mr, mr_at_start, mr / static_cast<long long>(2 * kConns));
    CHECK(mr > 0);
    CHECK(mr == static_cast<long long>(idle.registered_bytes)); // the counters say what the kernel says
    CHECK(mr / static_cast<long long>(2 * kConns) <= static_cast<long long>(kIdleLimit));

    // Every connection echoes; the peak of registered memory in use is
    // sampled meanwhile.
    uint64_t peak = 0;
    // `group` connections at a time: a burst on 1000 at once shares the
    // device's bandwidth so thinly that no ring limits a stream (nor should
    // grow).
    auto echo_round = [&](size_t len, uint64_t seed, std::vector<std::string> &sent, size_t group) {
        peak = 0;
        for (size_t first = 0; first < kConns; first += group) {
            size_t end = std::min(kConns, first + group);
            for (size_t i = first; i < end; i++) {
                sent[i] += make_payload(len, seed + i);
                clients[i]->send(std::string_view(sent[i]).substr(sent[i].size() - len));
            }
            bool done = env.run_until(
                [&] {
                    peak = std::max<uint64_t>(peak, transport_stats(env).registered_in_use);
                    for (size_t i = first; i < end; i++)
                        if (!clients[i]->failed() && clients[i]->received.size() < sent[i].size()) return false;
                    return true;
                },
                600s);
            if (!done) return false;
        }
        return true;
    };
    std::vector<std::string> sent(kConns);
    REQUIRE(echo_round(100, 1000, sent, kConns));
    // A burst on each, 20 at a time: larger than the first rings, so they grow.
    REQUIRE(echo_round(128 * 1024, 5000, sent, 20));
    report(env, "right after a 128 KiB burst on each");
    std::printf("memory during the burst: at most %llu bytes in use (%llu per connection end)\n",
                static_cast<unsigned long long>(peak), static_cast<unsigned long long>(peak / (2 * kConns)));
    uint64_t grown = 0;
    for (Endpoint *e : server.endpoints) grown += rings_of(env, *e).rx_grows > 0;
    for (Endpoint *c : clients) grown += rings_of(env, *c).rx_grows > 0;
    std::printf("%llu of %zu connection ends grew their receive ring\n", static_cast<unsigned long long>(grown),
                2 * kConns);
    CHECK(grown >= kConns / 2);
    CHECK(peak > idle.registered_in_use);

    // Idle again: every connection back on its block's rings.
    bool down = env.run_until([&] { return transport_stats(env).registered_in_use <= idle.registered_in_use; }, 60s);
    report(env, "after rdma.ring_idle_ms without data");
    CHECK(down);
    CHECK(in_use_per_connection(env) <= kIdleLimit);
    size_t over = 0;
    for (Endpoint *e : server.endpoints) over += rings_of(env, *e).registered > kGrownLimit;
    for (Endpoint *c : clients) over += rings_of(env, *c).registered > kGrownLimit;
    CHECK(over == 0);
    REQUIRE(echo_round(100, 9000, sent, kConns));
    size_t intact = 0;
    for (size_t i = 0; i < kConns; i++) {
        INFO("connection " << i << ": " << clients[i]->last_error);
        CHECK_FALSE(clients[i]->failed());
        intact += checksum(clients[i]->received) == checksum(sent[i]);
    }
    CHECK(intact == kConns);
    CHECK(env.rule_violations() == "");
}
