// SPDX-License-Identifier: MIT
// Moving bytes over RDMA: big transfers, backpressure, many connections.
#include "rdma_test.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

TEST_CASE("a 32 MiB transfer arrives intact and moves in large writes, not small segments", "[rdma][data]")
{
    use_settings({});
    Env env;
    Server &server = env.listen();
    server.echo = false;
    Endpoint &client = env.connect(server);
    std::string payload = make_payload(size_t(32) << 20, 77);
    client.send(payload);
    client.shutdown_after_flush();
    REQUIRE(env.run_until([&] { return client.failed() || (!server.endpoints.empty() && server.endpoints[0]->eof); },
                          600s));
    INFO("client: " << client.last_error);
    REQUIRE_FALSE(client.failed());
    Endpoint &peer = *server.endpoints[0];
    CHECK(peer.received.size() == payload.size());
    CHECK(checksum(peer.received) == checksum(payload));
    tw_conn_stats st = client.stats();
    CHECK(st.bytes_sent == payload.size());
    REQUIRE(st.messages_sent > 0);
    // One data work request carries many KiB: the ring is written in big
    // pieces (as far as the peer's free space allows).
    CHECK(st.bytes_sent / st.messages_sent >= 4096);
    CHECK(st.rnr_retries == 0);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("a slow reader makes the writer wait for credits, and every byte still arrives in order", "[rdma][data]")
{
    use_settings({});
    Env env;
    Server &server = env.listen();
    server.echo = false;
    server.configure = [](Endpoint &e) {
        e.read_chunk = 1024;
        e.reads_per_event = 1;
    };
    Endpoint &client = env.connect(server);
    std::string payload = make_payload(size_t(2) << 20, 5);
    client.send(payload);
    client.shutdown_after_flush();
    REQUIRE(env.run_until([&] { return client.failed() || (!server.endpoints.empty() && server.endpoints[0]->eof); },
                          600s));
    REQUIRE_FALSE(client.failed());
    Endpoint &peer = *server.endpoints[0];
    CHECK(checksum(peer.received) == checksum(payload));
    tw_conn_stats st = client.stats();
    CHECK(st.credit_stalls > 0);
    CHECK(client.eagain_writes + client.short_writes > 0);
    CHECK(st.write_would_block > 0);
    CHECK(st.rnr_retries == 0);
    tw_conn_stats peer_st = peer.stats();
    CHECK(peer_st.control_sent > 0); // ring space came back through CREDIT messages
    CHECK(env.rule_violations() == "");
}

TEST_CASE("200 concurrent connections each get their own data back", "[rdma][data]")
{
    constexpr int kConns = 200;
    use_settings({});
    Env env;
    Server &server = env.listen();
    std::vector<Endpoint *> clients;
    std::vector<std::string> payloads;
    for (int i = 0; i < kConns; i++) {
        payloads.push_back(make_payload(3000 + 41 * size_t(i), 500 + i));
        Endpoint &c = env.connect(server.address, 120000);
        c.send(payloads.back());
        c.shutdown_after_flush();
        clients.push_back(&c);
    }
    REQUIRE(env.run_until(
        [&] {
            for (Endpoint *c : clients)
                if (!c->failed() && !c->eof) return false;
            return true;
        },
        600s));
    CHECK(server.accepted == size_t(kConns));
    size_t intact = 0;
    for (size_t i = 0; i < clients.size(); i++) {
        INFO("connection " << i << ": " << clients[i]->last_error);
        CHECK_FALSE(clients[i]->failed());
        if (checksum(clients[i]->received) == checksum(payloads[i])) intact++;
    }
    CHECK(intact == size_t(kConns));
    CHECK(transport_stats(env).connections_open >= size_t(kConns));
    CHECK(env.rule_violations() == "");
}

TEST_CASE("rdma.gid_index chooses the source address a client connects from", "[rdma][data]")
{
    // Without a source address, a connect to the server's IP (a local address
    // in the guest) stays on the server's device; GID 1 of the first device
    // carries the client's IP (::ffff:10.77.0.1), so the override makes the
    // connection leave from there.
    const char *client_ip = std::getenv("SOFTROCE_CLIENT_IP");
    REQUIRE(client_ip);
    use_settings({{"rdma.gid_index", "1"}});
    {
        Env env;
        Server &server = env.listen();
        tw_connect_params p{};
        p.size = sizeof p;
        p.addr = as_sockaddr(server.address);
        p.addrlen = address_length(server.address);
        tw_conn *conn = nullptr;
        {
            OpGuard guard;
            REQUIRE(env.ops().connect(env.tloop(0), &p, &conn) == 0);
        }
        Endpoint &client = env.adopt(0, conn, "client");
        REQUIRE(client.attach() == 0);
        REQUIRE(env.run_until([&] { return client.connected || client.failed(); }, 60s));
        INFO("client: " << client.last_error);
        REQUIRE(client.connected);
        CHECK(to_text(client.local_address()).find(std::string(client_ip) + ":") == 0);
    }
    use_settings({}); // the Env above is gone: the next cases get the defaults
}

TEST_CASE("writes inside a connection's callback leave as one message when it returns; others leave at once",
          "[rdma][data]")
{
    constexpr int kRequests = 40;
    constexpr int kPieces = 8;
    constexpr size_t kPiece = 8;
    use_settings({});
    Env env;
    Server &server = env.listen();
    server.echo = false;
    // Each 16-byte request is answered by eight 8-byte writes from the
    // server's callback.
    std::string server_trouble; // checked below: no assertion inside a callback
    server.configure = [&server_trouble](Endpoint &e) {
        e.on_event = [&server_trouble](Endpoint &ep, uint32_t events) {
            if (!(events & TW_EV_READ) || (events & TW_EV_ERROR)) return true;
            char req[16];
            ssize_t n;
            while ((n = ep.read(req, sizeof req)) > 0) {
                if (n != ssize_t(sizeof req)) server_trouble += "a request arrived in pieces; ";
                for (int i = 0; i < kPieces; ++i) {
                    char piece[kPiece];
                    std::memset(piece, 'a' + i, sizeof piece);
                    if (ep.write(piece, sizeof piece) != ssize_t(sizeof piece)) server_trouble += "a short write; ";
                }
            }
            return false;
        };
    };
    Endpoint &client = env.connect(server);
    REQUIRE(env.run_until([&] { return client.connected > 0 || client.failed(); }));
    std::string expected;
    for (int r = 0; r < kRequests; ++r) {
        // Outside any callback a write is posted before write() returns
        // (after the first reply, the peer has named its ring for sure).
        uint64_t before = client.stats().messages_sent;
        std::string req(16, char('A' + r % 26));
        REQUIRE(client.write(req.data(), req.size()) == ssize_t(req.size()));
        if (r > 0) CHECK(client.stats().messages_sent == before + 1);
        for (int i = 0; i < kPieces; ++i) expected.append(kPiece, char('a' + i));
        REQUIRE(env.run_until([&] { return client.failed() || client.received.size() == expected.size(); }));
    }
    INFO("client: " << client.describe());
    REQUIRE_FALSE(client.failed());
    CHECK(server_trouble == "");
    CHECK(client.received == expected);
    REQUIRE(server.endpoints.size() == 1);
    tw_conn_stats st = server.endpoints[0]->stats();
    CHECK(st.bytes_sent == uint64_t(kRequests) * kPieces * kPiece);
    // One message per reply, not one per write.
    CHECK(st.messages_sent == uint64_t(kRequests));
    CHECK(env.rule_violations() == "");
}
