// SPDX-License-Identifier: MIT
// A port that goes down and comes back (`ip link set sr0 down`, then up):
// the transport follows its device's asynchronous events (IBV_EVENT_PORT_ERR,
// IBV_EVENT_PORT_ACTIVE), says so in one log line, and its description
// shows the port's state and how often it went down and came back.  rdma_cm
// reports none of this; without the events a connection learns it only when
// its keepalive times out.
#include "rdma_test.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

namespace {

/// Takes the client's netdev down; brings it and the guest's routes back
/// (tools/softroce/guest/wire.sh) when it goes.
struct LinkDown {
    LinkDown() { REQUIRE(std::system("ip link set sr0 down") == 0); }
    ~LinkDown() { up(); }
    void up()
    {
        if (done) return;
        done = true;
        std::system("ip link set sr0 up; ip link set sr1 up; "
                    "ip route replace 10.77.0.2/32 dev sr0 table 101 2>/dev/null; "
                    "ip route replace 10.77.0.1/32 dev sr1 table 102 2>/dev/null; true");
    }
    bool done = false;
};

} // namespace

TEST_CASE("a port that goes down and comes back is followed: a log line, the description shows its state and "
          "counts, and new connections use RDMA again within 10 s",
          "[rdma][links]")
{
    const char *client_dev = std::getenv("SOFTROCE_CLIENT_DEV");
    REQUIRE(client_dev);
    const std::string dev = std::string("device: ") + client_dev + " in use, port 1 ";
    use_settings({});
    LogWatch logs;
    Env env;
    Server &server = env.listen(); // the loops are attached: one of them reads each device's events
    REQUIRE(env.run_until(
        [&] { return contains(transport_description(env), dev + "ACTIVE; events: port down 0, up 0, fatal 0"); }));
    bool went_down = false, came_back = false;
    {
        LinkDown link;
        went_down =
            env.run_until([&] { return contains(transport_description(env), dev + "DOWN; events: port down 1"); }, 30s);
        INFO(transport_description(env));
        link.up();
        came_back = env.run_until(
            [&] {
                std::string d = transport_description(env);
                return contains(d, dev + "ACTIVE; events: port down ") &&
                       !contains(d, dev + "ACTIVE; events: port down 0") && !contains(d, ", up 0,");
            },
            30s);
    }
    INFO(transport_description(env));
    CHECK(went_down);
    CHECK(came_back);
    // The same listener takes new connections again.
    auto up_at = std::chrono::steady_clock::now();
    bool served = false;
    while (!served && std::chrono::steady_clock::now() - up_at < 10s) {
        Endpoint *c = nullptr;
        if (env.try_connect(server.address, 2000, &c) != 0) {
            env.spin();
            continue;
        }
        c->send("after the link came back");
        env.run_until([&] { return c->received.size() >= 24 || c->failed(); }, 5s);
        served = c->received == "after the link came back";
        c->close();
    }
    CHECK(served);
    CHECK(contains(logs.text(), std::string("RDMA device ") + client_dev + " port 1 went down (IBV_EVENT_PORT_ERR)"));
}
