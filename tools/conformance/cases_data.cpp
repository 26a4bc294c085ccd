// SPDX-License-Identifier: MIT
// Conformance: moving bytes - sizes, many connections, order, flow control
// and the counters that describe it.
#include "harness.hpp"
#include "needs.hpp"
#include "payload.hpp"

#include <catch2/catch.hpp>

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

using namespace twinwire::conformance;

namespace {

/// Send `payload` to an echo server and wait for all of it to come back
/// (to end-of-stream when the transport can half-close).
void echo_round_trip(Env &env, Server &server, Endpoint &client, const std::string &payload)
{
    bool half_close = env.caps() & TW_CAP_HALF_CLOSE;
    client.send(payload);
    if (half_close) client.shutdown_after_flush();
    bool done = env.run_until(
        [&] { return client.failed() || (half_close ? client.eof : client.received.size() >= payload.size()); });
    INFO(client.describe());
    INFO((server.endpoints.empty() ? std::string("no server endpoint") : server.endpoints[0]->describe()));
    REQUIRE(done);
    CHECK_FALSE(client.failed());
}

tw_transport_stats transport_stats(Env &env, bool *supported)
{
    tw_transport_stats s{};
    s.size = sizeof s;
    int rc = env.ops().ctrl(env.transport().handle(), nullptr, nullptr, TW_CTRL_GET_TRANSPORT_STATS, &s, sizeof s);
    *supported = rc == 0;
    return s;
}

} // namespace

TEST_CASE("payloads of 0 B to 16 MiB come back intact through an echo server", "[data]")
{
    size_t size = GENERATE(as<size_t>{}, 0, 1, 100, 4095, 4096, 65536, (1 << 20) + 7, 16 << 20);
    INFO("payload size " << size);
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect(server);
    REQUIRE(env.run_until([&] { return client.connected || client.errors; }));
    char none = 0;
    CHECK(client.write(&none, 0) == 0); // a zero-byte write is not an error and sends nothing
    std::string payload = make_payload(size, size + 1);
    echo_round_trip(env, server, client, payload);
    CHECK(client.received.size() == size);
    CHECK(checksum(client.received) == checksum(payload));
    CHECK(env.rule_violations() == "");
}

TEST_CASE("100 concurrent connections each get their own data back", "[data]")
{
    constexpr int kConns = 100;
    Env env;
    Server &server = env.listen();
    std::vector<Endpoint *> clients;
    std::vector<std::string> payloads;
    bool half_close = env.caps() & TW_CAP_HALF_CLOSE;
    for (int i = 0; i < kConns; i++) {
        payloads.push_back(make_payload(20000 + 37 * size_t(i), 1000 + i));
        Endpoint &c = env.connect(server);
        c.send(payloads.back());
        if (half_close) c.shutdown_after_flush();
        clients.push_back(&c);
    }
    auto done = [&](const Endpoint *c, size_t i) {
        return c->failed() || (half_close ? c->eof : c->received.size() >= payloads[i].size());
    };
    REQUIRE(env.run_until([&] {
        for (size_t i = 0; i < clients.size(); i++)
            if (!done(clients[i], i)) return false;
        return true;
    }));
    CHECK(server.accepted == size_t(kConns));
    for (size_t i = 0; i < clients.size(); i++) {
        INFO("connection " << i << ": " << clients[i]->last_error);
        CHECK_FALSE(clients[i]->failed());
        CHECK(clients[i]->received.size() == payloads[i].size());
        CHECK(checksum(clients[i]->received) == checksum(payloads[i]));
    }
    CHECK(env.rule_violations() == "");
}

TEST_CASE("pipelined requests are answered in the order they were sent", "[data]")
{
    constexpr int kRequests = 2000;
    Env env;
    Server &server = env.listen();
    server.echo = false;
    // A line protocol: "req N\n" is answered with "resp N\n".
    server.configure = [](Endpoint &e) {
        e.on_received = [](Endpoint &self) {
            size_t start = 0, nl;
            while ((nl = self.received.find('\n', start)) != std::string::npos) {
                self.send("resp " + self.received.substr(start + 4, nl - start - 4) + "\n");
                start = nl + 1;
            }
            self.received.erase(0, start);
        };
    };
    Endpoint &client = env.connect(server);
    std::string requests, expected;
    for (int i = 0; i < kRequests; i++) {
        requests += "req " + std::to_string(i) + "\n";
        expected += "resp " + std::to_string(i) + "\n";
    }
    client.send(requests); // all at once, before any answer
    REQUIRE(env.run_until([&] { return client.received.size() >= expected.size() || client.failed(); }));
    CHECK(client.received == expected);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("a slow reader forces short writes or -EAGAIN, and nothing is lost or duplicated", "[data][flow]")
{
    constexpr size_t kSize = size_t(32) << 20; // more than the socket buffers of both ends hold
    Env env;
    Server &server = env.listen();
    server.echo = false;
    server.configure = [](Endpoint &e) {
        e.pause_reading(); // not reading at all until the writer is blocked
        e.read_chunk = 16 * 1024;
        e.reads_per_event = 1;
    };
    Endpoint &client = env.connect(server);
    std::string payload = make_payload(kSize, 99);
    client.send(payload);
    REQUIRE(env.run_until([&] { return client.eagain_writes > 0 || client.failed(); }));
    REQUIRE_FALSE(client.failed());
    REQUIRE(client.queued() > 0);
    REQUIRE(env.run_until([&] { return server.endpoints.size() == 1; })); // set_callback is posted
    Endpoint &reader = *server.endpoints[0];
    CHECK(reader.received.empty());

    reader.resume_reading();
    REQUIRE(env.run_until([&] { return reader.received.size() >= kSize || reader.failed() || client.failed(); }));
    env.spin();
    CHECK_FALSE(client.failed());
    CHECK(client.queued() == 0);
    CHECK(reader.received.size() == kSize);
    CHECK(checksum(reader.received) == checksum(payload));
    if (TW_NEED_OP(get_stats).met) CHECK(client.stats().write_would_block > 0);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("the counters add up: what one end sent is what the other received", "[data][stats]")
{
    CONFORMANCE_NEEDS(TW_NEED_OP(get_stats));
    Env env;
    bool have_transport_stats = false;
    tw_transport_stats before = transport_stats(env, &have_transport_stats);
    Server &server = env.listen();
    Endpoint &client = env.connect(server);
    std::string payload = make_payload((1 << 20) + 7, 5);
    echo_round_trip(env, server, client, payload);
    REQUIRE(server.endpoints.size() == 1);
    Endpoint &peer = *server.endpoints[0];

    tw_conn_stats c = client.stats(), s = peer.stats();
    CHECK(c.version >= 1);
    CHECK(c.bytes_sent == payload.size());
    CHECK(s.bytes_received == c.bytes_sent);
    CHECK(s.bytes_sent == s.bytes_received);
    CHECK(c.bytes_received == s.bytes_sent);
    CHECK(c.messages_sent >= 1);
    CHECK(s.messages_received >= 1);
    CHECK(s.messages_sent >= 1);
    CHECK(c.messages_received >= 1);

    if (!have_transport_stats) {
        WARN(context().name() << " has no TW_CTRL_GET_TRANSPORT_STATS: transport counters not checked");
        return;
    }
    tw_transport_stats during = transport_stats(env, &have_transport_stats);
    CHECK(during.connections_accepted == before.connections_accepted + 1);
    CHECK(during.connections_connected == before.connections_connected + 1);
    CHECK(during.connections_open >= before.connections_open + 2);
    client.close();
    peer.close();
    // Closing may finish from the loop (lingering, disconnect handshakes).
    CHECK(env.run_until(
        [&] { return transport_stats(env, &have_transport_stats).connections_open == before.connections_open; }));
}

TEST_CASE("writev and readv move scattered buffers as one ordered stream", "[data]")
{
    Env env;
    Server &server = env.listen();
    server.echo = false;
    server.configure = [](Endpoint &e) {
        e.auto_read = false; // read with readv below
        e.manage_interest = false;
    };
    Endpoint &client = env.connect_both(server);
    Endpoint &peer = *server.endpoints.back();
    const tw_transport_ops &ops = env.ops();

    // Pieces of very different sizes, one of them empty.
    std::vector<std::string> pieces = {make_payload(100, 1), "", make_payload(5000, 2), make_payload(300000, 3)};
    std::string expected;
    for (auto &p : pieces) expected += p;
    {
        OpGuard guard;
        CHECK(ops.writev(client.conn(), nullptr, 0) == 0);
    }
    // Write and read in the same loop: a transport need not buffer the whole
    // stream while nobody reads (RDMA holds its ring and send buffer, no more).
    size_t sent = 0;
    std::string got;
    char a[7], b[30000], c[65536];
    REQUIRE(env.run_until([&] {
        if (sent < expected.size()) {
            // Rebuild the iovecs from what is still unsent (writes may be short).
            std::vector<iovec> iov;
            size_t skip = sent;
            for (auto &p : pieces) {
                if (skip >= p.size()) {
                    skip -= p.size();
                    if (p.empty()) iov.push_back({nullptr, 0});
                    continue;
                }
                iov.push_back({const_cast<char *>(p.data()) + skip, p.size() - skip});
                skip = 0;
            }
            OpGuard guard;
            ssize_t n = ops.writev(client.conn(), iov.data(), static_cast<int>(iov.size()));
            if (n > 0) sent += static_cast<size_t>(n);
            REQUIRE((n >= 0 || n == -EAGAIN));
        }
        iovec iov[3] = {{a, sizeof a}, {b, sizeof b}, {c, sizeof c}};
        OpGuard guard;
        ssize_t n = ops.readv(peer.conn(), iov, 3);
        REQUIRE((n > 0 || n == -EAGAIN));
        for (size_t i = 0, left = n > 0 ? size_t(n) : 0; left > 0; i++) {
            size_t take = std::min(left, iov[i].iov_len);
            got.append(static_cast<char *>(iov[i].iov_base), take);
            left -= take;
        }
        return got.size() >= expected.size();
    }));
    CHECK(sent == expected.size());
    CHECK(got.size() == expected.size());
    CHECK(checksum(got) == checksum(expected));
    CHECK(env.rule_violations() == "");
}
