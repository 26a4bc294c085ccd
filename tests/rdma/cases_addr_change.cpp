// SPDX-License-Identifier: MIT
// An address that moves to another hardware address: an active-backup bond
// failing over with fail_over_mac=active takes the new port's MAC, and
// rdma_cm sends ADDR_CHANGE to every id bound to the bond.  The listener
// listens again on what holds the address now; connections on the old path
// fail at once with a clear error instead of at the keepalive bound.
#include "rdma_test.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <thread>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

namespace {

constexpr const char *kBondIp = "10.78.0.1";
constexpr const char *kBondSysfs = "/sys/class/net/twb0/bonding/active_slave";

/// An active-backup bond twb0 of two dummy ports with 10.78.0.1/24 and a
/// SoftRoCE device rxeb on it; all removed when it goes.  `rdma link delete`
/// returns once the transport let go of rxeb, which its loop does: the
/// bond goes while the Env's loop runs.
struct Bond {
    explicit Bond(Env &env) : env_(env)
    {
        // Loaded by name: busybox modprobe does not resolve rtnl-link-* aliases.
        made = std::system("modprobe bonding && modprobe dummy && "
                           "ip link add twb0 type bond mode active-backup fail_over_mac active miimon 100 && "
                           "ip link add twd0 type dummy && ip link add twd1 type dummy && "
                           "ip link set twd0 master twb0 && ip link set twd1 master twb0 && "
                           "ip link set twb0 up && ip addr add 10.78.0.1/24 dev twb0 && "
                           "rdma link add rxeb type rxe netdev twb0") == 0;
    }
    ~Bond()
    {
        auto removed = std::async(std::launch::async, [] {
            return std::system("rdma link delete rxeb 2>/dev/null; ip link del twb0 2>/dev/null; "
                               "ip link del twd0 2>/dev/null; ip link del twd1 2>/dev/null; true");
        });
        env_.run_until([&] { return removed.wait_for(0s) == std::future_status::ready; }, 60s);
    }
    static std::string active()
    {
        std::ifstream in(kBondSysfs);
        std::string port;
        in >> port;
        return port;
    }
    /// The bond refuses (EINVAL) a port whose link its miimon has not seen
    /// up yet: try for up to 10 s.
    static bool make_active(const std::string &port)
    {
        for (int attempt = 0; attempt < 100; ++attempt) {
            std::ofstream out(kBondSysfs);
            out << port << '\n';
            out.flush();
            if (out) return true;
            std::this_thread::sleep_for(100ms);
        }
        return false;
    }
    bool made = false;

private:
    Env &env_;
};

/// A round trip on a new connection, within `bound`: the echo of `text`.
/// No source address is bound (the suite's is on the wire): rdma_cm
/// resolves the bond's address to the bond's device at both ends.
bool echoes(Env &env, const Server &server, const std::string &text, std::chrono::milliseconds bound)
{
    auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < bound) {
        Endpoint *c = nullptr;
        if (env.try_connect(server.address, 5000, &c, false) != 0) {
            env.spin();
            continue;
        }
        c->send(text);
        env.run_until([&] { return c->received.size() >= text.size() || c->failed(); }, 5s);
        bool ok = c->received == text;
        c->close();
        if (ok) return true;
    }
    return false;
}

} // namespace

TEST_CASE("a bound address that moves to another hardware address (bonding failover, ADDR_CHANGE): the listener "
          "listens again and takes new connections within 10 s, connections on the old path fail at once, saying why",
          "[rdma][links]")
{
    use_settings({});
    LogWatch logs;
    Env env;
    Bond bond(env);
    REQUIRE(bond.made); // bonding and dummy are in tools/softroce/guest/initramfs-modules
    const std::string first = Bond::active();
    REQUIRE((first == "twd0" || first == "twd1"));
    const std::string second = first == "twd0" ? "twd1" : "twd0";
    Server &server = env.listen(0, 0, make_address(kBondIp));
    REQUIRE(echoes(env, server, "before the failover", 10s));
    Endpoint *before = nullptr;
    REQUIRE(env.try_connect(server.address, 5000, &before, false) == 0);
    before->send("ping");
    REQUIRE(env.run_until([&] { return before->received == "ping" || before->failed(); }));
    REQUIRE(before->received == "ping");
    CHECK(contains(transport_description(env),
                   "address changes (rdma_cm ADDR_CHANGE): listeners set up again 0, connections failed 0"));

    Endpoint *accepted = server.endpoints.back();
    // The echo connection ended: its accepted end is closed, as a daemon
    // does, so that the live connection's two ends are all that fail.
    REQUIRE(env.run_until([&] {
        for (Endpoint *e : server.endpoints)
            if (e != accepted && !e->eof && !e->failed()) return false;
        return true;
    }));
    close_finished(env, server, 0);

    const auto failover = std::chrono::steady_clock::now();
    auto ms_since = [&] {
        return static_cast<long long>(
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - failover).count());
    };
    REQUIRE(Bond::make_active(second));
    REQUIRE(Bond::active() == second);

    // Both ends of the live connection learn it from the event, long before
    // the keepalive bound.
    CHECK(env.run_until([&] { return before->failed() && accepted->failed(); }, 10s));
    const long long failed_ms = ms_since();
    INFO("the client: " << before->describe() << ": " << before->last_error);
    INFO("the accepted end: " << accepted->describe() << ": " << accepted->last_error);
    CHECK(contains(before->last_error, "ADDR_CHANGE"));
    CHECK(contains(before->last_error, "connect again"));
    CHECK(contains(accepted->last_error, "ADDR_CHANGE"));

    const std::string moved = std::string("RDMA listener on ") + to_text(server.address) +
                              ": RDMA_CM_EVENT_ADDR_CHANGE: its address moved to another hardware address";
    CHECK(env.run_until([&] { return contains(logs.text(), moved); }, 10s));
    CHECK(echoes(env, server, "after the failover", 10s));
    const long long served_ms = ms_since();
    printf("address change: both ends of a live connection failed %lld ms after the failover, a new connection "
           "echoed after %lld ms\n",
           failed_ms, served_ms);
    const std::string text = transport_description(env);
    INFO(text);
    CHECK(contains(text, "address changes (rdma_cm ADDR_CHANGE): listeners set up again 1, connections failed 2"));
    INFO(logs.text());
    CHECK(env.rule_violations().empty());
}
