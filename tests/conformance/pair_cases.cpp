// SPDX-License-Identifier: MIT
// Cases only pair has: the zero-copy path is really without copies, the
// buffer bound is exact, one loop is deterministic, its key is checked, and
// the namespace is the process's.  Linked into conformance-pair only.
#include "harness.hpp"
#include "payload.hpp"

#include <twinwire/config.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

using namespace twinwire;
using namespace twinwire::conformance;

namespace {

/// pair.buffer_size of the transport under test, from its describe().
size_t buffer_size(Env &env)
{
    std::string text = env.transport().describe();
    size_t at = text.find("buffer_size: ");
    REQUIRE(at != std::string::npos);
    return std::stoul(text.substr(at + 13));
}

std::unique_ptr<Transport> second_transport(const Config &config)
{
    std::string why;
    auto t = load_plugin("pair", config, &why);
    INFO(why);
    REQUIRE(t);
    return t;
}

/// One scripted exchange on one loop; every callback as "endpoint:events".
std::vector<std::string> scripted_exchange()
{
    Env env;
    Server &server = env.listen();
    std::vector<std::string> seen;
    int next_server = 0;
    auto record = [&seen](const std::string &who) {
        return [&seen, who](Endpoint &, uint32_t events) {
            seen.push_back(who + ":" + std::to_string(events));
            return true;
        };
    };
    server.configure = [&](Endpoint &e) { e.on_event = record("server" + std::to_string(next_server++)); };
    std::vector<Endpoint *> clients;
    for (int i = 0; i < 3; i++) {
        Endpoint &c = env.connect(server);
        c.on_event = record("client" + std::to_string(i));
        c.read_chunk = 1000 + 3000 * size_t(i); // different read sizes, different event counts
        c.send(make_payload(300000 + 12345 * size_t(i), i));
        c.shutdown_after_flush();
        clients.push_back(&c);
    }
    REQUIRE(env.run_until([&] {
        for (Endpoint *c : clients)
            if (!c->eof && !c->failed()) return false;
        return true;
    }));
    for (Endpoint *c : clients) CHECK_FALSE(c->failed());
    return seen;
}

} // namespace

TEST_CASE("pair: a zero-copy send is written in the peer's memory, and recv_buf_borrow lends those very bytes",
          "[pair][zero-copy]")
{
    Env env;
    Server &server = env.listen();
    server.echo = false;
    server.configure = [](Endpoint &e) {
        e.auto_read = false;
        e.manage_interest = false;
    };
    Endpoint &client = env.connect_both(server);
    Endpoint &peer = *server.endpoints[0];
    const tw_transport_ops &ops = env.ops();
    const std::string message = make_payload(5000, 42);
    tw_buf out = TW_BUF_INIT;
    {
        OpGuard guard;
        REQUIRE(ops.send_buf_get(client.conn(), message.size(), &out) == 0);
        memcpy(out.data, message.data(), message.size());
        out.len = message.size();
        REQUIRE(ops.send_buf_submit(client.conn(), &out) == 0);
    }
    tw_buf in = TW_BUF_INIT;
    REQUIRE(borrow(env, peer, &in) == 0);
    CHECK(in.data == out.data); // the same memory: no second copy
    REQUIRE(in.len == message.size());
    CHECK(std::string(static_cast<char *>(in.data), in.len) == message);
    OpGuard guard;
    CHECK(ops.recv_buf_return(peer.conn(), &in, in.len) == 0);
}

TEST_CASE("pair: a writer is refused with -EAGAIN once exactly pair.buffer_size bytes wait unread, and gets "
          "TW_EV_WRITE when the reader takes some",
          "[pair][flow]")
{
    Env env;
    const size_t limit = buffer_size(env);
    Server &server = env.listen();
    server.echo = false;
    server.configure = [](Endpoint &e) { e.pause_reading(); };
    Endpoint &client = env.connect_both(server);
    Endpoint &reader = *server.endpoints[0];
    client.manage_interest = false;
    client.set_events(0);
    const std::string stream = make_payload(limit + 4096, 7);
    size_t accepted = 0;
    ssize_t n;
    while ((n = client.write(stream.data() + accepted, stream.size() - accepted)) > 0) accepted += size_t(n);
    CHECK(n == -EAGAIN);
    CHECK(accepted == limit);

    uint64_t writes_before = client.callbacks;
    client.set_events(TW_EV_WRITE);
    env.spin();
    CHECK(client.callbacks == writes_before); // full: no TW_EV_WRITE
    char some[1000];
    REQUIRE(reader.read(some, sizeof some) == ssize_t(sizeof some));
    REQUIRE(env.run_until([&] { return client.callbacks > writes_before; }));
    CHECK(client.write(stream.data() + accepted, stream.size() - accepted) == ssize_t(sizeof some));
    client.set_events(0);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("pair: with one loop the same exchange gives the same events in the same order every run", "[pair]")
{
    std::vector<std::string> first = scripted_exchange();
    std::vector<std::string> second = scripted_exchange();
    CHECK(first.size() > 20);
    CHECK(first == second);
}

TEST_CASE("pair: addresses are names of the process's namespace: any address listens, a wildcard overlaps every "
          "address of its port, and a connect to 0.0.0.0 reaches 127.0.0.1",
          "[pair][connect]")
{
    Env env;
    SECTION("an address no interface has")
    {
        Server &server = env.listen(0, 0, make_address("10.1.2.3"));
        CHECK(host_text(server.address) == "10.1.2.3");
        Endpoint &client = env.connect(server);
        client.send("over a made-up address");
        REQUIRE(env.run_until([&] { return client.received.size() >= 22 || client.failed(); }));
        CHECK(client.received == "over a made-up address");
        CHECK(to_text(client.peer_address()) == to_text(server.address));
    }
    SECTION("a wildcard and a specific address on one port")
    {
        Server &specific = env.listen(0, 0, make_address("127.0.0.1"));
        sockaddr_storage any = make_address("0.0.0.0", port_of(specific.address));
        CHECK_THROWS_WITH(env.listen(0, 0, any), Catch::Contains("listen on 0.0.0.0:") && Catch::Contains("in use"));
        sockaddr_storage to_any = make_address("0.0.0.0", port_of(specific.address));
        Endpoint &client = env.connect(to_any);
        REQUIRE(env.run_until([&] { return client.connected || client.errors; }));
        CHECK(client.connected == 1);
        CHECK(to_text(client.peer_address()) == to_text(specific.address));
    }
    CHECK(env.rule_violations() == "");
}

TEST_CASE("pair: after shutdown(SHUT_RD) reads return end-of-stream, and what the peer writes is taken and dropped",
          "[pair][close]")
{
    Env env;
    Server &server = env.listen();
    server.echo = false;
    server.configure = [](Endpoint &e) { e.pause_reading(); };
    Endpoint &client = env.connect_both(server);
    Endpoint &reader = *server.endpoints[0];
    const std::string chunk = make_payload(10000, 3);
    REQUIRE(client.write(chunk.data(), chunk.size()) == ssize_t(chunk.size()));
    REQUIRE(reader.shutdown(SHUT_RD) == 0);
    char byte;
    CHECK(reader.read(&byte, 1) == 0); // what was buffered is gone too
    size_t taken = 0;
    for (int i = 0; i < 100; i++) { // far more than the buffer holds
        ssize_t n = client.write(chunk.data(), chunk.size());
        REQUIRE(n == ssize_t(chunk.size()));
        taken += size_t(n);
    }
    CHECK(taken > buffer_size(env));
    tw_buf out = TW_BUF_INIT;
    {
        OpGuard guard;
        REQUIRE(env.ops().send_buf_get(client.conn(), 100, &out) == 0);
        out.len = 100;
        CHECK(env.ops().send_buf_submit(client.conn(), &out) == 0);
    }
    CHECK(reader.read(&byte, 1) == 0);
    CHECK(client.stats().bytes_sent == chunk.size() * 101 + 100);
    env.spin();
    CHECK_FALSE(client.failed());
    CHECK(env.rule_violations() == "");
}

TEST_CASE("pair: a connect where nothing listens names the address in last_error", "[pair][errors]")
{
    Env env;
    sockaddr_storage nowhere = env.unused_address();
    Endpoint &client = env.connect(nowhere);
    REQUIRE(env.run_until([&] { return client.errors > 0; }));
    CHECK(client.error_code == -ECONNREFUSED);
    CHECK_THAT(client.last_error, Catch::Contains("connect") && Catch::Contains("ECONNREFUSED") &&
                                      Catch::Contains(to_text(nowhere)) && Catch::Contains("hint:"));
}

TEST_CASE("pair: two transports initialised apart in one process reach each other (the namespace is the process's)",
          "[pair][threads]")
{
    Env env;
    Server &server = env.listen();
    Config config;
    config.set("pair.buffer_size", "8k");
    auto other = second_transport(config);
    Loop loop(7);
    tw_transport_loop *tl = other->attach(loop);
    tw_connect_params p{};
    p.size = sizeof p;
    p.addr = as_sockaddr(server.address);
    p.addrlen = address_length(server.address);
    tw_conn *conn = nullptr;
    REQUIRE(other->ops().connect(tl, &p, &conn) == 0);
    {
        Endpoint client(other->ops(), conn, "other transport's client");
        REQUIRE(client.attach() == 0);
        const std::string payload = make_payload(100000, 9); // bigger than its 8k buffer
        client.send(payload);
        client.shutdown_after_flush();
        REQUIRE(env.run_until([&] {
            loop.run_once(std::chrono::milliseconds(0));
            return client.eof || client.failed();
        }));
        CHECK_FALSE(client.failed());
        CHECK(checksum(client.received) == checksum(payload));
        CHECK(client.rule_violations() == "");
    }
    other->detach(loop);
}

TEST_CASE("pair: a bad pair.buffer_size stops start-up naming the key, the value and where it came from",
          "[pair][config]")
{
    Config config;
    SECTION("not a size")
    {
        config.set("pair.buffer_size", "12q", "test.conf:3");
        CHECK_THROWS_WITH(check_transport_keys(config), Catch::Contains("pair.buffer_size") && Catch::Contains("12q") &&
                                                            Catch::Contains("test.conf:3"));
        CHECK_THROWS_AS(second_transport(config), ConfigError);
    }
    SECTION("below the minimum")
    {
        config.set("pair.buffer_size", "100");
        CHECK_THROWS_WITH(check_transport_keys(config), Catch::Contains("pair.buffer_size") && Catch::Contains("100"));
    }
    SECTION("an unknown key under pair.")
    {
        config.set("pair.bufer_size", "64k");
        CHECK_THROWS_WITH(check_transport_keys(config), Catch::Contains("pair.bufer_size"));
    }
    SECTION("a good value is taken")
    {
        config.set("pair.buffer_size", "64k");
        CHECK_NOTHROW(check_transport_keys(config));
        CHECK_THAT(second_transport(config)->describe(), Catch::Contains("buffer_size: 65536"));
    }
}
