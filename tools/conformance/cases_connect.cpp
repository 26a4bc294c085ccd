// SPDX-License-Identifier: MIT
// Conformance: establishing connections, and the ways it fails.
#include "harness.hpp"
#include "needs.hpp"
#include "payload.hpp"

#include <catch2/catch.hpp>

#include <cerrno>

using namespace twinwire::conformance;

TEST_CASE("a client connects and both ends report TW_EV_CONNECTED once", "[connect]")
{
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect_both(server);
    env.spin();
    Endpoint &accepted = *server.endpoints[0];
    CHECK(client.connected == 1);
    CHECK(accepted.connected == 1);
    CHECK(client.errors == 0);
    CHECK(accepted.errors == 0);
    CHECK(server.accepted == 1);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("both ends of a connection report matching local and peer addresses", "[connect]")
{
    CONFORMANCE_NEEDS(TW_NEED_OP(local_addr), TW_NEED_OP(peer_addr), TW_NEED_OP(listener_addr));
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect_both(server);
    Endpoint &accepted = *server.endpoints[0];
    sockaddr_storage client_local = client.local_address();
    sockaddr_storage client_peer = client.peer_address();
    sockaddr_storage server_local = accepted.local_address();
    sockaddr_storage server_peer = accepted.peer_address();
    CHECK(to_text(client_peer) == to_text(server.address));
    CHECK(to_text(server_local) == to_text(server.address));
    CHECK(to_text(server_peer) == to_text(client_local));
    if (auto source = context().client_source()) CHECK(same_host(client_local, *source));
    CHECK(env.rule_violations() == "");
}

// The promise of accept() in transport.h: what the transport posts to the
// target loop in accept() runs before the host's set_callback, also when the
// target is the listener's own loop (the harness posts set_callback, like
// the runtime).  A transport that finishes its handshake in such a task and
// expects the callback to be set already loses TW_EV_CONNECTED here.
TEST_CASE("a connection accepted onto the listener's own loop comes up although set_callback runs after the "
          "transport's accept tasks",
          "[connect][rules]")
{
    Env env;
    Server &server = env.listen(0, 0);
    Endpoint &client = env.connect(server);
    client.send("first bytes");
    // The accepted end echoes: the bytes coming back prove it came up.
    bool up = env.run_until([&] { return client.failed() || client.received.size() >= 11; });
    INFO(client.describe());
    INFO((server.endpoints.empty() ? std::string("no accepted endpoint") : server.endpoints[0]->describe()));
    REQUIRE(up);
    CHECK_FALSE(client.failed());
    CHECK(client.received == "first bytes");
    REQUIRE(server.endpoints.size() == 1);
    CHECK(server.endpoints[0]->connected == 1);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("an accepted connection reports nothing before set_callback, and what happened meanwhile after it",
          "[connect][rules]")
{
    Env env;
    Server &server = env.listen();
    server.hold = true;
    server.echo = false;
    Endpoint &client = env.connect(server);
    client.send("sent before the server set its callback");
    REQUIRE(env.run_until([&] { return client.connected && server.held.size() == 1 && client.queued() == 0; }));
    env.spin(50); // the bytes arrive while the accepted conn has no callback

    server.release_held();
    REQUIRE(server.endpoints.size() == 1);
    Endpoint &accepted = *server.endpoints[0];
    CHECK(accepted.callbacks == 0);
    REQUIRE(env.run_until([&] { return accepted.received.size() >= 39; }));
    CHECK(accepted.received == "sent before the server set its callback");
    CHECK(accepted.connected == 1);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("no callback runs from inside an operation, and READ/WRITE never come before TW_EV_CONNECTED",
          "[connect][rules]")
{
    // Every Endpoint call runs inside an OpGuard; a callback arriving
    // during one is counted as re-entrant.  Drive traffic both ways with
    // writes and reads issued from inside callbacks and from outside.
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect(server);
    client.send(make_payload(300000, 1)); // queued before CONNECTED: written from the callback
    REQUIRE(env.run_until([&] { return client.received.size() >= 300000 || client.failed(); }));
    client.send(make_payload(1000, 2)); // written from outside any callback
    REQUIRE(env.run_until([&] { return client.received.size() >= 301000 || client.failed(); }));
    CHECK_FALSE(client.failed());
    CHECK(env.rule_violations() == "");
}

// Accepts: TW_EV_ERROR with get_error() == -ECONNREFUSED; read then returns
// -ECONNREFUSED, write any negative code.
TEST_CASE("connecting where nothing listens reports TW_EV_ERROR with -ECONNREFUSED", "[connect][errors]")
{
    Env env;
    sockaddr_storage nowhere = env.unused_address();
    Endpoint &client = env.connect(nowhere);
    REQUIRE(env.run_until([&] { return client.errors > 0; }));
    env.spin();
    CHECK(client.connected == 0);
    CHECK(client.errors == 1);
    CHECK(client.error_code == -ECONNREFUSED);
    CHECK_FALSE(client.last_error.empty());
    INFO("last_error: " << client.last_error);
    char byte = 'x';
    CHECK(client.read(&byte, 1) == -ECONNREFUSED);
    CHECK(client.write(&byte, 1) < 0);
    CHECK(env.rule_violations() == "");
}

// Accepts: TW_EV_ERROR with get_error() == -ETIMEDOUT.
TEST_CASE("a connect that is never answered reports -ETIMEDOUT once its timeout passes", "[connect][errors][silent]")
{
    std::string why;
    auto silent = context().silent_address(&why);
    CONFORMANCE_NEEDS(need_context(silent.has_value(), "an address that never answers (" + why + ")"));
    Env env;
    constexpr uint32_t timeout_ms = 300;
    Endpoint &client = env.connect(*silent, timeout_ms);
    REQUIRE(env.run_until([&] { return client.errors > 0; }, std::chrono::milliseconds(timeout_ms) + wait_limit()));
    CHECK(client.connected == 0);
    CHECK(client.error_code == -ETIMEDOUT);
    CHECK_FALSE(client.last_error.empty());
    INFO("last_error: " << client.last_error);
    CHECK(env.rule_violations() == "");
}

// Accepts: -EINVAL only, returned by the call itself, and nothing created.
TEST_CASE("invalid parameters are refused at once with -EINVAL and create nothing", "[connect][errors]")
{
    Env env;
    const tw_transport_ops &ops = env.ops();
    sockaddr_storage addr = context().server_address();

    tw_connect_params cp{};
    cp.size = sizeof cp;
    tw_conn *conn = nullptr;
    SECTION("connect without an address")
    {
        cp.addr = nullptr;
        CHECK(ops.connect(env.tloop(), &cp, &conn) == -EINVAL);
    }
    SECTION("connect with an address length too short for its family")
    {
        cp.addr = as_sockaddr(addr);
        cp.addrlen = 2;
        CHECK(ops.connect(env.tloop(), &cp, &conn) == -EINVAL);
    }
    SECTION("connect with a parameter block smaller than ABI 1.0's")
    {
        cp.addr = as_sockaddr(addr);
        cp.addrlen = address_length(addr);
        cp.size = 8;
        CHECK(ops.connect(env.tloop(), &cp, &conn) == -EINVAL);
    }
    CHECK(conn == nullptr);

    tw_listen_params lp{};
    lp.size = sizeof lp;
    lp.addr = as_sockaddr(addr);
    lp.addrlen = address_length(addr);
    tw_listener *listener = nullptr;
    SECTION("listen without an incoming callback")
    {
        lp.on_incoming = nullptr;
        CHECK(ops.listen(env.tloop(), &lp, &listener) == -EINVAL);
    }
    CHECK(listener == nullptr);
}

// Accepts: -EADDRINUSE.
TEST_CASE("listening on an address and port already in use fails with -EADDRINUSE", "[connect][errors]")
{
    Env env;
    Server &first = env.listen();
    tw_listen_params lp{};
    lp.size = sizeof lp;
    lp.addr = as_sockaddr(first.address);
    lp.addrlen = address_length(first.address);
    lp.on_incoming = [](tw_listener *, void *) {};
    tw_listener *second = nullptr;
    CHECK(env.ops().listen(env.tloop(), &lp, &second) == -EADDRINUSE);
    if (second) env.ops().listener_close(second);
}

TEST_CASE("IPv6: clients and servers talk over IPv6, and TW_LISTEN_V6ONLY decides whether IPv4 gets in",
          "[connect][ipv6]")
{
    CONFORMANCE_NEEDS(TW_NEED_CAP(TW_CAP_IPV6));
    Env env;
    auto v6 = context().server_address_v6();
    REQUIRE(v6); // a transport that claims IPv6 is tested on it

    SECTION("an IPv6 echo round trip")
    {
        Server &server = env.listen(0, 0, *v6);
        Endpoint &client = env.connect(server);
        client.send("over IPv6");
        REQUIRE(env.run_until([&] { return client.received.size() >= 9 || client.failed(); }));
        CHECK(client.received == "over IPv6");
        if (TW_NEED_OP(peer_addr).met) CHECK(client.peer_address().ss_family == AF_INET6);
    }
    sockaddr_storage any6 = make_address("::");
    sockaddr_storage v4 = context().server_address();
    SECTION("a dual-stack listener (no TW_LISTEN_V6ONLY) accepts IPv4")
    {
        Server &server = env.listen(0, 0, any6, 0);
        set_port(v4, port_of(server.address));
        Endpoint &client = env.connect(v4);
        REQUIRE(env.run_until([&] { return client.connected || client.errors; }));
        CHECK(client.connected == 1);
    }
    SECTION("a TW_LISTEN_V6ONLY listener refuses IPv4")
    {
        Server &server = env.listen(0, 0, any6, TW_LISTEN_V6ONLY);
        set_port(v4, port_of(server.address));
        Endpoint &client = env.connect(v4);
        REQUIRE(env.run_until([&] { return client.connected || client.errors; }));
        CHECK(client.connected == 0);
        CHECK(client.error_code == -ECONNREFUSED);
    }
    CHECK(env.rule_violations() == "");
}
