// SPDX-License-Identifier: MIT
// Fault matrix: a storm of connections opened and closed against one
// server whose listener and connections live on two other loops.  Over
// RDMA in the guest and over TCP on the host (fault-matrix --tcp).
#include "fault.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <random>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;

namespace {

constexpr int kConnections = 1000;
constexpr size_t kWindow = 32; ///< connections in flight at once

enum class Churn { Exchange, CloseWhileConnecting, CloseIdle };

struct Live {
    Endpoint *e;
    Churn kind;
    std::string message; ///< sent once connected (Exchange)
    bool sent = false;
    bool ready() const
    {
        return e->failed() ||
               (e->connected && (kind == Churn::CloseIdle || !sent || e->received.size() >= message.size()));
    }
};

} // namespace

TEST_CASE("a storm of 1000 connections opened and closed against one server leaves it serving, with its "
          "registered memory back to the idle figure",
          "[fault][storm][tcp]")
{
    use_fault_settings();
    std::mt19937_64 rng(fault_seed() ^ 0x5707);
    std::uniform_int_distribution<int> pick(0, 2);
    Env env(3);
    Server &server = env.listen(1, 2); // listener on loop 1, connections on loop 2
    server.configure = [](Endpoint &e) { e.read_chunk = 4096; };
    env.spin();
    tw_transport_stats idle = transport_stats(env);

    std::vector<Live> live;
    int started = 0, exchanged = 0, closed_connecting = 0, closed_idle = 0;
    std::string failures;
    while (started < kConnections || !live.empty()) {
        while (started < kConnections && live.size() < kWindow) {
            Endpoint &e = env.connect(server.address, 30000);
            e.read_chunk = 4096;
            auto kind = static_cast<Churn>(pick(rng));
            std::string message = make_payload(64, fault_seed() + uint64_t(started));
            ++started;
            if (kind == Churn::CloseWhileConnecting) {
                e.close();
                ++closed_connecting;
                continue;
            }
            live.push_back({&e, kind, message, false});
        }
        if (live.empty()) continue;
        auto any_ready = [&] {
            for (Live &l : live)
                if (l.ready()) return true;
            return false;
        };
        INFO("after " << started << " connections");
        REQUIRE(env.run_until(any_ready, kFaultBound));
        for (auto it = live.begin(); it != live.end();) {
            Endpoint &e = *it->e;
            bool done = false;
            if (e.failed()) {
                failures += e.describe() + "\n";
                done = true;
            } else if (e.connected && it->kind == Churn::CloseIdle) {
                ++closed_idle;
                done = true;
            } else if (e.connected && it->kind == Churn::Exchange) {
                if (!it->sent) {
                    e.send(it->message);
                    it->sent = true;
                } else if (e.received.size() >= it->message.size()) {
                    CHECK(e.received == it->message);
                    ++exchanged;
                    done = true;
                }
            }
            if (done) {
                e.close();
                it = live.erase(it);
            } else {
                ++it;
            }
        }
        close_finished(env, server, 2);
    }
    INFO(failures);
    CHECK(failures.empty());

    // The server still serves.
    Endpoint &after = env.connect(server.address, 30000);
    after.send("served after the storm");
    REQUIRE(env.run_until([&] { return after.received.size() >= 22 || after.failed(); }, kFaultBound));
    CHECK(after.received == "served after the storm");
    after.close();

    // Everything comes back (blocks a peer could still write wait out their
    // quarantine first).
    tw_transport_stats now{};
    bool back = env.run_until(
        [&] {
            close_finished(env, server, 2);
            now = transport_stats(env);
            return now.connections_open == idle.connections_open && now.registered_in_use == idle.registered_in_use &&
                   now.quarantined_bytes == 0;
        },
        kFaultBound);
    printf(
        "storm (%s): %d connections (%d exchanged, %d closed while connecting, %d closed idle), %zu accepted; "
        "registered in use %llu -> %llu bytes, open %llu -> %llu, handshakes aborted %llu\n",
        context().name().c_str(), started, exchanged, closed_connecting, closed_idle, server.accepted.load(),
        static_cast<unsigned long long>(idle.registered_in_use), static_cast<unsigned long long>(now.registered_in_use),
        static_cast<unsigned long long>(idle.connections_open), static_cast<unsigned long long>(now.connections_open),
        static_cast<unsigned long long>(now.handshakes_aborted));
    CHECK(back);
    CHECK(env.rule_violations() == "");
}
