// SPDX-License-Identifier: MIT
// Conformance: connections handed from the listener's loop to another
// loop on another thread.
#include "harness.hpp"
#include "payload.hpp"

#include <catch2/catch.hpp>

using namespace twinwire::conformance;

namespace {

struct PeerView {
    size_t endpoints = 0;
    uint64_t connected = 0;
    std::string violations;
};

/// What the server's endpoints on loop `i` saw (read on that loop's thread).
PeerView peer_view(Env &env, Server &server, unsigned i)
{
    PeerView v;
    env.on_loop(i, [&] {
        v.endpoints = server.endpoints.size();
        for (Endpoint *e : server.endpoints) v.connected += e->connected;
    });
    v.violations = env.rule_violations();
    return v;
}

} // namespace

TEST_CASE("a connection accepted onto another loop's thread works", "[threads]")
{
    Env env(2);
    unsigned listen_loop = GENERATE(0u, 1u);
    unsigned target_loop = 1 - listen_loop;
    INFO("listener on loop " << listen_loop << ", connection on loop " << target_loop);
    Server &server = env.listen(listen_loop, target_loop);
    Endpoint &client = env.connect(server);
    std::string payload = make_payload((1 << 20) + 3, 77);
    client.send(payload);
    bool half_close = env.caps() & TW_CAP_HALF_CLOSE;
    if (half_close) client.shutdown_after_flush();
    REQUIRE(env.run_until(
        [&] { return client.failed() || (half_close ? client.eof : client.received.size() >= payload.size()); }));
    CHECK_FALSE(client.failed());
    CHECK(checksum(client.received) == checksum(payload));
    PeerView v = peer_view(env, server, target_loop);
    CHECK(v.endpoints == 1);
    CHECK(v.connected == 1);
    CHECK(v.violations == "");
}

TEST_CASE("a connection handed to another loop keeps its events until set_callback runs there", "[threads][rules]")
{
    Env env(2);
    Server &server = env.listen(0, 1);
    server.hold = true; // read on loop 1 by hand_over, posted there after this
    Endpoint &client = env.connect(server);
    client.send("before set_callback");
    REQUIRE(env.run_until([&] { return client.connected && client.queued() == 0; }));
    size_t held = 0;
    REQUIRE(env.run_until([&] {
        env.on_loop(1, [&] { held = server.held.size(); });
        return held == 1;
    }));
    env.on_loop(1, [&] {
        server.echo = true;
        server.release_held();
    });
    REQUIRE(env.run_until([&] { return client.received.size() >= 19 || client.failed(); }));
    CHECK(client.received == "before set_callback");
    PeerView v = peer_view(env, server, 1);
    CHECK(v.connected == 1);
    CHECK(v.violations == "");
}
