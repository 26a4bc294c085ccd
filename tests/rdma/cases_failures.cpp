// SPDX-License-Identifier: MIT
// Failures that RDMA makes special: exhausted registered memory, stale
// connect requests, killed peers, fork.
#include "rdma_test.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

/// Connect until one gets through (a closed connection's memory may wait
/// out a short quarantine), bounded; nullptr when none did.
static Endpoint *connect_when_room(Env &env, const sockaddr_storage &addr)
{
    auto until = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < until) {
        Endpoint &e = env.connect(addr, 30000);
        env.run_until([&] { return e.connected || e.failed(); });
        if (e.connected) return &e;
        env.run_until([] { return false; }, 500ms);
    }
    return nullptr;
}

TEST_CASE("when the server's registered pool is exhausted a new connection is refused with the reason, "
          "existing ones keep working, and a closed one's memory serves a new one",
          "[rdma][pool]")
{
    use_settings({});
    // A server process with room for exactly two connections.
    sockaddr_storage addr = context().server_address();
    std::string line;
    pid_t child = start_child({"echo", host_text(addr), "rdma.ring_size=64k", "rdma.send_buffer_size=32k",
                               "rdma.pool_size=256k", "rdma.pool_max=256k"},
                              &line);
    REQUIRE(child > 0);
    uint16_t port = static_cast<uint16_t>(std::atoi(line.c_str()));
    INFO("child said: " << line);
    REQUIRE(port != 0);
    set_port(addr, port);
    {
        Env env;
        Endpoint &first = env.connect(addr, 30000);
        Endpoint &second = env.connect(addr, 30000);
        REQUIRE(env.run_until(
            [&] { return (first.connected || first.failed()) && (second.connected || second.failed()); }));
        REQUIRE(first.connected);
        REQUIRE(second.connected);
        Endpoint &third = env.connect(addr, 30000);
        REQUIRE(env.run_until([&] { return third.connected || third.failed(); }));
        CHECK_FALSE(third.connected);
        INFO("third: " << third.last_error);
        CHECK(third.error_code == -ECONNREFUSED);
        CHECK(third.last_error.find("pool") != std::string::npos);
        CHECK(third.last_error.find("rdma.pool_max") != std::string::npos);

        // The two that fit still carry data both ways.
        first.send("still alive");
        REQUIRE(env.run_until([&] { return first.received.size() >= 11 || first.failed(); }));
        CHECK(first.received == "still alive");

        // Memory comes back when a connection closes: a new one fits again.
        first.close();
        Endpoint *again = connect_when_room(env, addr);
        INFO("again: " << (again ? again->describe() : std::string("never connected")));
        REQUIRE(again);
        again->send("room again");
        REQUIRE(env.run_until([&] { return again->received.size() >= 10 || again->failed(); }));
        CHECK(again->received == "room again");
        CHECK(env.rule_violations() == "");
    }
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
}

TEST_CASE("when this side's registered pool is exhausted a new connection fails at once with the reason, and "
          "closing connections gives the memory back",
          "[rdma][pool]")
{
    use_settings({{"rdma.ring_size", "64k"},
                  {"rdma.send_buffer_size", "32k"},
                  {"rdma.pool_size", "256k"},
                  {"rdma.pool_max", "256k"}});
    Env env(2);
    Server &server = env.listen(1, 1); // the server's pool is on loop 1
    Endpoint &first = env.connect(server);
    Endpoint &second = env.connect(server);
    REQUIRE(
        env.run_until([&] { return (first.connected || first.failed()) && (second.connected || second.failed()); }));
    REQUIRE(first.connected);
    Endpoint &third = env.connect(server);
    REQUIRE(env.run_until([&] { return third.connected || third.failed(); }));
    CHECK_FALSE(third.connected);
    INFO("third: " << third.last_error);
    CHECK(third.error_code == -ENOBUFS);
    CHECK(third.last_error.find("rdma.pool_max") != std::string::npos);
    CHECK(transport_stats(env).pool_exhausted >= 1);
    CHECK(third.stats().pool_exhausted == 1);
    first.send("still alive");
    REQUIRE(env.run_until([&] { return first.received.size() >= 11 || first.failed(); }));
    CHECK(first.received == "still alive");

    // Closing them gives their memory back: registered use drops and new
    // connections fit again.
    uint64_t in_use_with_two = transport_stats(env).registered_in_use;
    first.close();
    second.close();
    third.close();
    REQUIRE(env.run_until([&] {
        close_finished(env, server, 1); // the server closes its ends too
        return transport_stats(env).connections_open == 0;
    }));
    REQUIRE(env.run_until([&] { return transport_stats(env).registered_in_use < in_use_with_two; }));
    Endpoint *again = connect_when_room(env, server.address);
    INFO("again: " << (again ? again->describe() : std::string("never connected")));
    REQUIRE(again);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("a connect request whose client already gave up is cleaned up quietly, with no QP left behind",
          "[rdma][handshake]")
{
    use_settings({});
    long qps_before = qp_count();
    LogWatch logs;
    {
        Env env(2);
        Server &server = env.listen(1, 1);
        // A first connection resolves the neighbour, so the stale one below
        // reaches the server (its CONNECT_REQUEST is sent) before it gives up.
        Endpoint &warm = env.connect(server);
        REQUIRE(env.run_until([&] { return warm.connected || warm.failed(); }));
        REQUIRE(warm.connected);
        uint64_t aborted_before = transport_stats(env).handshakes_aborted;
        // The server's loop is busy while the client gives up.
        std::atomic<bool> release{false};
        env.loop(1).post([&] {
            while (!release) std::this_thread::sleep_for(10ms);
        });
        Endpoint *client = nullptr;
        REQUIRE(env.try_connect(server.address, 1500, &client) == 0);
        REQUIRE(env.run_until([&] { return client->failed() || client->connected; }));
        CHECK(client->error_code == -ETIMEDOUT);
        CHECK(client->last_error.find("(connecting") != std::string::npos);
        client->close();
        env.spin();
        release = true;
        REQUIRE(env.run_until([&] { return transport_stats(env).handshakes_aborted > aborted_before; }, 120s));
        env.spin();
    }
    // Whatever the server saw of it is gone with the Env.
    tw_transport_stats st{};
    st.size = sizeof st;
    REQUIRE(transport().ops().ctrl(transport().handle(), nullptr, nullptr, TW_CTRL_GET_TRANSPORT_STATS, &st,
                                   sizeof st) == 0);
    CHECK(st.connections_open == 0);
    CHECK(logs.warnings() == 0);
    INFO(logs.text());
    if (qps_before >= 0) CHECK(qp_count() == qps_before);
}

TEST_CASE("a peer killed mid-stream surfaces as a connection error, its verbs objects go without the kernel waiting "
          "on a reference, and its ring is reusable at once because its rkey was withdrawn",
          "[rdma][liveness]")
{
    use_settings({});
    const char *server_ip = getenv("SOFTROCE_SERVER_IP");
    std::string line;
    sockaddr_storage addr = context().server_address();
    pid_t child = start_child({"sink", host_text(addr)}, &line);
    REQUIRE(child > 0);
    INFO("child said: " << line << " (server ip " << (server_ip ? server_ip : "?") << ")");
    uint16_t port = static_cast<uint16_t>(std::atoi(line.c_str()));
    REQUIRE(port != 0);
    set_port(addr, port);

    Env env;
    Endpoint &client = env.connect(addr, 30000);
    client.send(make_payload(size_t(4) << 20, 9));
    // The sink never reads: the client fills the peer's ring and stalls.
    REQUIRE(env.run_until([&] { return client.failed() || client.stats().credit_stalls > 0; }, 120s));
    REQUIRE_FALSE(client.failed());
    // rxe warns from __rxe_cleanup when it destroys an object something
    // still references, after waiting 50 s for it: a killed process whose
    // QP a bound window still held took that long to exit.
    long cleanup_warnings = kernel_log_count("__rxe_cleanup");
    REQUIRE(cleanup_warnings >= 0);
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(kernel_log_count("__rxe_cleanup") == cleanup_warnings);
    REQUIRE(env.run_until([&] { return client.errors > 0; }, 300s));
    INFO("last_error: " << client.last_error);
    CHECK(client.error_code < 0);
    CHECK(client.error_code != -EAGAIN);
    CHECK_FALSE(client.last_error.empty());
    client.close();
    env.spin();
    // The dead peer knew our ring's rkey, but its window was deallocated
    // before the memory went back to the pool: nothing is held back.
    tw_transport_stats st = transport_stats(env);
    CHECK(st.quarantined_bytes == 0);
    CHECK(st.registered_in_use == 0);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("a forked child gets TW_EFORKED from every operation, with a message naming fork and the fix", "[rdma][fork]")
{
    use_settings({});
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect(server);
    REQUIRE(env.run_until([&] { return client.connected || client.failed(); }));
    REQUIRE(client.connected);
    const tw_transport_ops &ops = env.ops();
    tw_conn *conn = client.conn();
    tw_transport_loop *tloop = env.tloop();
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        char byte = 'x';
        if (ops.write(conn, &byte, 1) != -TW_EFORKED) bad |= 1;
        if (ops.read(conn, &byte, 1) != -TW_EFORKED) bad |= 2;
        if (!strstr(ops.last_error(conn), "fork") || !strstr(ops.last_error(conn), "daemonis")) bad |= 4;
        tw_connect_params cp{};
        cp.size = sizeof cp;
        sockaddr_storage to = server.address;
        cp.addr = as_sockaddr(to);
        cp.addrlen = address_length(to);
        tw_conn *c2 = nullptr;
        if (ops.connect(tloop, &cp, &c2) != -TW_EFORKED || c2) bad |= 8;
        if (ops.get_error(conn) != -TW_EFORKED) bad |= 16;
        _exit(bad);
    }
    REQUIRE(pid > 0);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // The parent is unaffected.
    client.send("parent");
    REQUIRE(env.run_until([&] { return client.received.size() >= 6 || client.failed(); }));
    CHECK(client.received == "parent");
}

TEST_CASE("requests beyond the backlog, and those waiting when the listener closes, are refused with the reason",
          "[rdma][handshake]")
{
    use_settings({});
    Env env;
    const tw_transport_ops &ops = env.ops();
    sockaddr_storage addr = context().server_address();
    tw_listen_params lp{};
    lp.size = sizeof lp;
    lp.backlog = 1;
    lp.addr = as_sockaddr(addr);
    lp.addrlen = address_length(addr);
    lp.on_incoming = [](tw_listener *, void *) {}; // never accepts: requests wait
    tw_listener *ls = nullptr;
    REQUIRE(ops.listen(env.tloop(), &lp, &ls) == 0);
    sockaddr_storage bound{};
    uint32_t len = sizeof bound;
    REQUIRE(ops.listener_addr(ls, reinterpret_cast<sockaddr *>(&bound), &len) == 0);
    Endpoint &waiting = env.connect(bound, 30000);
    env.run_until([&] { return waiting.failed(); }, 2000ms); // its request is queued meanwhile
    Endpoint &extra = env.connect(bound, 30000);
    REQUIRE(env.run_until([&] { return extra.failed() || extra.connected; }));
    INFO("extra: " << extra.last_error);
    CHECK(extra.error_code == -ECONNREFUSED);
    CHECK(extra.last_error.find("backlog") != std::string::npos);
    CHECK_FALSE(waiting.failed());

    ops.listener_close(ls);
    REQUIRE(env.run_until([&] { return waiting.failed() || waiting.connected; }));
    INFO("waiting: " << waiting.last_error);
    CHECK(waiting.error_code == -ECONNREFUSED);
    CHECK(waiting.last_error.find("listener closed") != std::string::npos);
    CHECK(env.rule_violations() == "");
}
