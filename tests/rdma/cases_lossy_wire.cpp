// SPDX-License-Identifier: MIT
// Retransmissions on a lossy wire must not break window operations.  rxe
// replays a finished BIND_MW when it retransmits work posted before it (the
// replay fails: the window has a new key) and a LOCAL_INV behind unfinished
// work can stall the send queue, so the plugin posts window operations only
// once the remote operations before them completed (docs/rdma-design.md,
// "Window operations").  An
// echo over growing rings with 2 % of one direction's packets dropped makes
// both ends retransmit while they bind and invalidate windows; before that
// rule, about one connection in four was reset or stalled here.
#include "rdma_test.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

namespace {

/// A counter of the device's port (rxe's hw_counters).
uint64_t port_counter(const char *dev, const char *name)
{
    std::ifstream f(std::string("/sys/class/infiniband/") + dev + "/ports/1/hw_counters/" + name);
    uint64_t v = 0;
    f >> v;
    return v;
}

/// Drops `percent` of the packets leaving `netdev` while it lives.
struct PacketLoss {
    std::string netdev;
    PacketLoss(std::string dev, int percent) : netdev(std::move(dev))
    {
        std::string cmd = "modprobe sch_netem 2>/dev/null; tc qdisc replace dev " + netdev + " root netem loss " +
                          std::to_string(percent) + "%";
        if (std::system(cmd.c_str()) != 0) throw std::runtime_error("could not add packet loss: " + cmd);
    }
    ~PacketLoss() { std::system(("tc qdisc del dev " + netdev + " root 2>/dev/null").c_str()); }
};

} // namespace

TEST_CASE("an echo over growing rings survives a wire that drops packets: retransmissions replay no window "
          "operation",
          "[rdma][rings][links]")
{
    const char *netdev = std::getenv("SOFTROCE_NETDEV");
    const char *server_dev = std::getenv("SOFTROCE_SERVER_DEV");
    const char *client_dev = std::getenv("SOFTROCE_CLIENT_DEV");
    REQUIRE(netdev);
    REQUIRE(server_dev);
    REQUIRE(client_dev);
    use_settings({{"rdma.ring_size", "32k"},
                  {"rdma.send_buffer_size", "16k"},
                  {"rdma.ring_max", "4M"},
                  {"rdma.send_buffer_max", "4M"}});
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect(server);
    REQUIRE(env.run_until([&] { return client.failed() || client.connected; }));
    REQUIRE_FALSE(client.failed());
    uint64_t retries_before = port_counter(server_dev, "completer_retry_err") +
                              port_counter(client_dev, "completer_retry_err");
    std::string sent;
    {
        // The client's packets (its data, and its acknowledgements of the
        // server's) are dropped: both ends retransmit.
        PacketLoss loss(netdev, 2);
        for (int round = 0; round < 6; round++) {
            std::string chunk = make_payload(size_t(8) << 20, 40 + round);
            sent += chunk;
            client.send(chunk);
            REQUIRE(env.run_until([&] { return client.failed() || client.received.size() >= sent.size(); }, 120s));
            INFO("round " << round << ": " << client.last_error);
            REQUIRE_FALSE(client.failed());
        }
    }
    uint64_t retries = port_counter(server_dev, "completer_retry_err") +
                       port_counter(client_dev, "completer_retry_err") - retries_before;
    std::printf("lossy wire: %zu bytes echoed, %llu retransmission rounds on the two devices\n", sent.size(),
                static_cast<unsigned long long>(retries));
    std::fflush(stdout);
    CHECK(retries > 0); // the wire did drop packets: the case ran what it claims
    CHECK(checksum(client.received) == checksum(sent));
    client.shutdown_after_flush();
    REQUIRE(env.run_until([&] { return client.failed() || client.eof; }, 120s));
    CHECK_FALSE(client.failed());
    CHECK(env.rule_violations() == "");
}
