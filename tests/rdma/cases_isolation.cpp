// SPDX-License-Identifier: MIT
// Write isolation (field lesson 10): an RDMA peer may write its own receive
// ring and nothing else, and nothing once its connection is gone.  A
// foreign rdma_cm client (rdma-isolation-probe) attacks a server beside a
// victim connection whose unread bytes sit in the server's ring.  The same
// probe also sends past its credits, which would take receives of the
// shared queue promised to other connections.
#include "rdma_test.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <thread>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

namespace {

/// The probe's verdict for one target: "own=... foreign=...".
struct Attempt {
    std::string own;
    std::string foreign;
};

Attempt find_attempt(const std::string &output, const std::string &target)
{
    std::istringstream in(output);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(target + " own=", 0) != 0) continue;
        size_t own = line.find("own=") + 4;
        size_t foreign = line.find(" foreign=");
        if (foreign == std::string::npos) break;
        size_t end = line.find(" ring=", foreign + 9);
        if (end == std::string::npos) end = line.find(" same-rkey=", foreign + 9);
        return Attempt{line.substr(own, foreign - own),
                       line.substr(foreign + 9, end == std::string::npos ? std::string::npos : end - foreign - 9)};
    }
    return Attempt{"(no line)", "(no line)"};
}

} // namespace

TEST_CASE("a peer can write its own receive ring and nothing else, and nothing after its connection closed; "
          "the victim's unread bytes stay intact",
          "[rdma][isolation]")
{
    // Rings of 128 KiB and 64 KiB from the start (they never grow here: the
    // server does not read).  The server's first slab (docs/rdma-design.md,
    // section 7; pool.cpp): rdma.pool_size of blocks of bytes_per_connection,
    // first every block's 128 KiB receive ring, then every block's local
    // part: its 64 KiB TX ring, then its control slots.
    use_settings({{"rdma.ring_size", "128k"}, {"rdma.send_buffer_size", "64k"}});
    const size_t ring = 128 * 1024, tx = 64 * 1024;
    Env env(2);
    const std::string text = transport_description(env);
    auto number = [&](const std::string &key) {
        size_t at = text.find("\n" + key + ": ");
        return at == std::string::npos ? 0 : std::stoull(text.substr(at + key.size() + 3));
    };
    const size_t block = number("bytes_per_connection");
    INFO(text);
    REQUIRE(block > ring + tx);
    const size_t count = number("pool_size") / block;
    REQUIRE(count >= 2);

    Server &server = env.listen(1, 1);                           // served by loop 1's thread while the probe runs
    server.configure = [](Endpoint &e) { e.auto_read = false; }; // bytes wait in the server's ring
    Endpoint &victim = env.connect(server);
    REQUIRE(env.run_until([&] { return victim.connected || victim.failed(); }));
    REQUIRE(victim.connected);
    const std::string payload = make_payload(64 * 1024, 1011);
    victim.send(payload);
    auto server_received = [&] {
        uint64_t got = 0;
        env.on_loop(1, [&] {
            if (!server.endpoints.empty()) got = server.endpoints[0]->stats().bytes_received;
        });
        return got;
    };
    REQUIRE(env.run_until([&] { return victim.failed() || server_received() == payload.size(); }));
    REQUIRE_FALSE(victim.failed());

    // The attacker: its first connection takes the block after the victim's.
    auto src = context().client_source();
    std::vector<std::string> args{host_text(server.address),   std::to_string(port_of(server.address)),
                                  src ? host_text(*src) : "-", std::to_string(ring),
                                  std::to_string(tx),          std::to_string(block - ring),
                                  std::to_string(count)};
    std::string output;
    int status = run_program(TW_ISOLATION_PROBE, args, &output);
    INFO("probe output:\n" << output);
    REQUIRE(status == 0);

    for (const char *target : {"victim-ring", "victim-tx-ring", "past-own-ring-end", "straddling-own-ring-end",
                               "own-tx-ring", "own-control-slots", "after-close"}) {
        Attempt a = find_attempt(output, target);
        INFO(target << ": own=" << a.own << " foreign=" << a.foreign);
        // The probe's rkey opens its own ring up to its last byte (so it read
        // the right rkey and address)...
        CHECK(a.own == "success");
        // ...and nothing else: the server's device refuses the write.
        CHECK(a.foreign == "remote access error");
    }
    CHECK(output.find("same-rkey=0") != std::string::npos);

    // The victim's bytes, unread while the probe wrote, come back intact.
    env.on_loop(1, [&] {
        Endpoint &peer = *server.endpoints[0];
        peer.auto_read = true;
        peer.update_interest();
    });
    REQUIRE(env.run_until([&] { return victim.failed() || victim.received.size() >= payload.size(); }));
    INFO("victim: " << victim.last_error);
    REQUIRE_FALSE(victim.failed());
    CHECK(victim.received.size() == payload.size());
    CHECK(checksum(victim.received) == checksum(payload));
}

TEST_CASE("a peer that ignores its credit cannot write over bytes not read yet: its write gets a remote access "
          "error and the reader's bytes stay intact",
          "[rdma][isolation]")
{
    use_settings({{"rdma.ring_size", "128k"}}); // the probe writes two of its 16 KiB segments
    Env env(2);
    Server &server = env.listen(1, 1); // served by loop 1's thread while the probe runs
    server.echo = false;
    server.configure = [](Endpoint &e) {
        e.auto_read = false; // bytes wait in the server's ring
        // The refused write ends the connection: then read what arrived.
        e.on_event = [](Endpoint &self, uint32_t events) {
            if (events & TW_EV_ERROR) self.auto_read = true;
            return true;
        };
    };
    auto received = [&] {
        uint64_t got = 0;
        env.on_loop(1, [&] {
            if (!server.endpoints.empty()) got = server.endpoints[0]->stats().bytes_received;
        });
        return got;
    };

    // The probe writes two segments honestly, then waits for the go file
    // before writing over them (layout arguments unused in this mode).
    const std::string go = "/tmp/tw-isolation-go-" + std::to_string(getpid());
    unlink(go.c_str());
    auto src = context().client_source();
    std::vector<std::string> args{host_text(server.address),
                                  std::to_string(port_of(server.address)),
                                  src ? host_text(*src) : "-",
                                  "0",
                                  "0",
                                  "0",
                                  "0",
                                  go};
    std::string output;
    int status = -1;
    std::thread probe([&] { status = run_program(TW_ISOLATION_PROBE, args, &output); });
    const uint64_t want = 2 * 128 * 1024 / 8; // two segments of the 128 KiB ring
    auto until = std::chrono::steady_clock::now() + 60s;
    while (received() < want && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
    uint64_t arrived = received();
    // The server saw the bytes arrive (and so withdrew their windows): go.
    FILE *f = fopen(go.c_str(), "w");
    if (f) fclose(f);
    probe.join();
    unlink(go.c_str());
    INFO("probe output:\n" << output);
    REQUIRE(status == 0);
    REQUIRE(arrived == want);
    CHECK(output.find("wrote " + std::to_string(want)) != std::string::npos);
    Attempt a = find_attempt(output, "unread-bytes");
    CHECK(a.own == "success");
    CHECK(a.foreign == "remote access error");

    // What the server reads (after the connection failed) is what the
    // probe wrote honestly.
    std::string got, state;
    auto until_read = std::chrono::steady_clock::now() + 60s;
    while (got.size() < want && std::chrono::steady_clock::now() < until_read) {
        env.on_loop(1, [&] {
            got = server.endpoints[0]->received;
            state = server.endpoints[0]->describe();
        });
        std::this_thread::sleep_for(10ms);
    }
    INFO("server side: " << state);
    std::string expected(want, '\0');
    for (size_t i = 0; i < want; ++i) expected[i] = static_cast<char>(i * 7 + 3);
    CHECK(got.size() == want);
    CHECK(checksum(got) == checksum(expected));
}

TEST_CASE("a peer that sends past its credits is cut off at the first message too many, naming it; the connections "
          "beside it on the shared receive queue carry on",
          "[rdma][isolation][credits]")
{
    use_settings({});
    LogWatch logs;
    Env env(2);
    Server &server = env.listen(1, 1); // served by loop 1's thread while the probe runs
    Endpoint &good = env.connect(server);
    REQUIRE(env.run_until([&] { return good.connected || good.failed(); }));
    REQUIRE(good.connected);

    // 1000 KEEPALIVEs, no credit returned: the server can answer 16 times
    // (the probe's receives), so past that it cannot give credits back.
    auto src = context().client_source();
    std::vector<std::string> args{"credits", host_text(server.address), std::to_string(port_of(server.address)),
                                  src ? host_text(*src) : "-", "1000"};
    std::string output;
    int status = run_program(TW_ISOLATION_PROBE, args, &output);
    INFO("probe output:\n" << output);
    REQUIRE(status == 0);
    unsigned sent = 0;
    size_t at = output.find("credits sent=");
    REQUIRE(at != std::string::npos);
    sent = static_cast<unsigned>(std::stoul(output.substr(at + 13)));
    CHECK(sent < 1000); // the server ended it
    CHECK(output.find("first-failure=none") == std::string::npos);

    std::string attacker;
    REQUIRE(env.run_until([&] {
        env.on_loop(1, [&] {
            if (server.endpoints.size() >= 2 && server.endpoints[1]->failed())
                attacker = server.endpoints[1]->last_error;
        });
        return !attacker.empty();
    }));
    INFO("the attacker's connection on the server: " << attacker);
    CHECK(contains(attacker, "a message past its credits"));
    printf("past its credits: %s", output.substr(at).c_str());

    // The well-behaved connection beside it still has its receives.
    good.send("after the flood");
    REQUIRE(env.run_until([&] { return good.received.size() >= 15 || good.failed(); }));
    CHECK(good.received == "after the flood");
    INFO(logs.text());
    CHECK(env.rule_violations().empty());
}
