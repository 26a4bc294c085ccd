// SPDX-License-Identifier: MIT
// Fault matrix: the peer process is killed (SIGKILL) at seeded random points
// while checksummed transfers run through it.  Over RDMA in the guest and
// over TCP on the host (fault-matrix --tcp).
#include "fault.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <random>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

namespace {

constexpr int kTransfers = 1000;
constexpr int kKills = 6;

/// Small to a few MiB: log-uniform 16 B .. 64 KiB, one in two hundred 1-3
/// MiB (about 15 MiB each way in all: the emulated guest is slow).
size_t transfer_size(std::mt19937_64 &rng)
{
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    if (unit(rng) < 0.005) return size_t(1 << 20) + size_t(unit(rng) * (2 << 20));
    return static_cast<size_t>(std::exp(std::log(16.0) + unit(rng) * (std::log(64.0 * 1024) - std::log(16.0))));
}

struct EchoPeer {
    pid_t pid = 0;
    sockaddr_storage addr{};
    bool alive() const { return pid > 0; }
    void kill_now()
    {
        if (pid <= 0) return;
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        pid = 0;
    }
};

EchoPeer start_echo_peer()
{
    EchoPeer peer;
    peer.addr = context().server_address();
    std::vector<std::string> args{"echo", host_text(peer.addr)};
    for (const std::string &a : fault_child_settings()) args.push_back(a);
    std::string line;
    peer.pid = start_child(args, &line);
    INFO("echo peer said: " << line);
    REQUIRE(peer.pid > 0);
    uint16_t port = static_cast<uint16_t>(std::atoi(line.c_str()));
    REQUIRE(port != 0);
    set_port(peer.addr, port);
    return peer;
}

} // namespace

TEST_CASE("a peer killed at random points during 1000 checksummed transfers: every completed transfer is intact, "
          "every interrupted one ends in an error on the survivor, none hangs",
          "[fault][killed][tcp]")
{
    use_fault_settings();
    uint64_t seed = fault_seed();
    std::mt19937_64 rng(seed);
    // Which transfers see a kill, and how long after the transfer starts.
    std::vector<int> kill_at;
    std::uniform_int_distribution<int> pick(0, kTransfers - 1);
    for (int i = 0; i < kKills; ++i) kill_at.push_back(pick(rng));
    std::sort(kill_at.begin(), kill_at.end());
    std::uniform_int_distribution<int> delay_us(0, 30000);

    int completed = 0, interrupted = 0, kills = 0;
    std::map<std::string, int> endings; ///< how interrupted transfers ended, for the summary
    uint64_t bytes = 0;
    size_t next_kill = 0;
    std::optional<std::chrono::steady_clock::time_point> kill_time;
    int transfer = 0;
    while (transfer < kTransfers) {
        EchoPeer peer = start_echo_peer();
        Env env;
        Endpoint &client = env.connect(peer.addr, 30000);
        REQUIRE(env.run_until([&] { return client.connected || client.failed(); }, kFaultBound));
        INFO("connect: " << client.describe());
        REQUIRE(client.connected);
        size_t offset = 0;
        for (; transfer < kTransfers; ++transfer) {
            size_t size = transfer_size(rng);
            std::string payload = make_payload(size, seed + uint64_t(transfer));
            // The kill is armed at its transfer and fires when its time comes,
            // in that transfer or a later one: anywhere in the stream.
            if (!kill_time && next_kill < kill_at.size() && kill_at[next_kill] <= transfer)
                kill_time = std::chrono::steady_clock::now() + std::chrono::microseconds(delay_us(rng));
            client.send(payload);
            bool ended = env.run_until(
                [&] {
                    if (kill_time && peer.alive() && std::chrono::steady_clock::now() >= *kill_time) {
                        peer.kill_now();
                        ++kills;
                    }
                    return client.received.size() >= offset + size || client.failed() || client.eof;
                },
                kFaultBound);
            INFO("seed " << seed << ", transfer " << transfer << " of " << size << " bytes: " << client.describe());
            REQUIRE(ended); // no hang past the timeouts
            if (client.received.size() >= offset + size && peer.alive()) {
                REQUIRE(checksum(std::string_view(client.received).substr(offset, size)) == checksum(payload));
                offset += size;
                bytes += size;
                ++completed;
                continue;
            }
            if (client.received.size() >= offset + size) {
                // Complete, and the peer was killed just after: intact all the same.
                REQUIRE(checksum(std::string_view(client.received).substr(offset, size)) == checksum(payload));
                ++completed;
                ++transfer;
                ++next_kill;
                kill_time.reset();
                break;
            }
            // Interrupted: what arrived is a prefix of what was sent, and the
            // survivor was told.  RDMA reports a reset (the peer never said
            // SHUTDOWN); TCP may see the dead process's FIN as end-of-stream
            // before the message completed, which a framed protocol reads as
            // truncation.
            REQUIRE(!peer.alive());
            std::string_view got = std::string_view(client.received).substr(offset);
            CHECK(got == std::string_view(payload).substr(0, got.size()));
            if (testing_tcp()) {
                CHECK((client.failed() || client.eof));
            } else {
                CHECK(client.failed());
                CHECK(client.error_code < 0);
                CHECK_FALSE(client.last_error.empty());
            }
            int code = client.error_code   ? client.error_code
                       : client.read_error ? client.read_error
                                           : client.write_error;
            std::string how = !client.failed()             ? "end-of-stream"
                              : !client.last_error.empty() ? client.last_error.substr(0, client.last_error.find(':'))
                                                           : (client.read_error ? "read error" : "write error");
            endings[std::to_string(code) + " " + how] += 1;
            ++interrupted;
            ++transfer;
            ++next_kill;
            kill_time.reset();
            break;
        }
        client.close();
        env.spin();
        CHECK(env.rule_violations() == "");
        peer.kill_now();
    }
    printf("killed peer (%s): seed %llu, %d transfers completed intact (%llu bytes), %d interrupted with an error, "
           "%d kills\n",
           context().name().c_str(), static_cast<unsigned long long>(seed), completed,
           static_cast<unsigned long long>(bytes), interrupted, kills);
    for (auto &e : endings) printf("  interrupted by: %s (x%d)\n", e.first.c_str(), e.second);
    CHECK(completed + interrupted == kTransfers);
    CHECK(kills >= 1);
}
