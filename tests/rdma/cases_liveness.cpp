// SPDX-License-Identifier: MIT
// Keepalives, dead peers, busy polling and the introspection calls.
#include "rdma_test.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

static sockaddr_storage start_sink(pid_t *pid)
{
    sockaddr_storage addr = context().server_address();
    std::string line;
    *pid = start_child({"sink", host_text(addr), "rdma.keepalive_ms=100", "rdma.dead_peer_ms=60000"}, &line);
    set_port(addr, static_cast<uint16_t>(std::atoi(line.c_str())));
    return addr;
}

TEST_CASE("an idle connection stays up on keepalives, and a peer that stops answering them is declared dead",
          "[rdma][liveness]")
{
    use_settings({{"rdma.keepalive_ms", "100"}, {"rdma.dead_peer_ms", "3000"}});
    pid_t child = 0;
    sockaddr_storage addr = start_sink(&child);
    REQUIRE(port_of(addr) != 0);
    Env env;
    Endpoint &client = env.connect(addr, 30000);
    REQUIRE(env.run_until([&] { return client.connected || client.failed(); }));
    REQUIRE(client.connected);
    // Idle, well past dead_peer_ms: keepalives and their answers keep it up.
    env.run_until([&] { return client.failed(); }, 5000ms);
    CHECK_FALSE(client.failed());
    CHECK(client.stats().control_sent > 0);
    CHECK(client.stats().control_received > 0);

    // A stopped process answers nothing (its kernel still acknowledges the
    // transport, so only the keepalive notices).
    kill(child, SIGSTOP);
    REQUIRE(env.run_until([&] { return client.errors > 0; }, 120s));
    INFO(client.last_error);
    CHECK(client.error_code == -TW_EPEERDEAD);
    CHECK(client.last_error.find("rdma.dead_peer_ms") != std::string::npos);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
}

TEST_CASE("with busy polling on, data still flows intact (completions polled between sleeps)", "[rdma][busypoll]")
{
    use_settings({{"rdma.busy_poll_us", "2000"}});
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect(server);
    std::string payload = make_payload(size_t(1) << 20, 3);
    client.send(payload);
    REQUIRE(env.run_until([&] { return client.failed() || client.received.size() >= payload.size(); }, 300s));
    CHECK_FALSE(client.failed());
    CHECK(checksum(client.received) == checksum(payload));
    CHECK(env.rule_violations() == "");
}

TEST_CASE("probe lists devices, port state, MTU and GIDs without init; describe shows what is in use",
          "[rdma][introspection]")
{
    use_settings({});
    std::string text(8192, '\0');
    const tw_transport_ops &ops = transport().ops();
    int n = ops.probe(nullptr, &text[0], text.size());
    REQUIRE(n > 0);
    text.resize(std::min<size_t>(size_t(n), text.size() - 1));
    INFO(text);
    CHECK(text.find("device: rxe0") != std::string::npos);
    CHECK(text.find("state ACTIVE") != std::string::npos);
    CHECK(text.find("active_mtu") != std::string::npos);
    CHECK(text.find("RoCEv2") != std::string::npos);
    // What ibv_devinfo and `ip address` would add: link rate, and the netdev
    // (with its addresses) behind the port and each RoCE GID.
    CHECK(text.find(" speed ") != std::string::npos);
    CHECK(text.find(" width ") != std::string::npos);
    CHECK(text.find(" netdev ") != std::string::npos);
    CHECK(text.find("RoCEv2 netdev ") != std::string::npos);
    const char *netdev = std::getenv("SOFTROCE_NETDEV"), *ip = std::getenv("SOFTROCE_IP");
    if (netdev && ip) CHECK(text.find(std::string(" netdev ") + netdev + " " + ip + "/24") != std::string::npos);
    std::string described = transport().describe();
    INFO(described);
    CHECK(described.find("rxe0") != std::string::npos);
    CHECK(described.find("bytes_per_connection:") != std::string::npos);
}
