// SPDX-License-Identifier: MIT
// The fault transport's own cases: each fault does what its key says, the
// same seed and calls give the same faults, and under faults that lose
// connections every byte still arrives in order or the error is reported.
#include "fault_context.hpp"

#include "fault_ctrl.h"
#include "payload.hpp"

#include <twinwire/transport.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <regex>

using namespace twinwire;
using namespace twinwire::conformance;
using fault_test::use_fault;

namespace {

using Clock = std::chrono::steady_clock;

// Write `n` calls of `size` bytes from the client, retrying each -EAGAIN on
// the next loop turns (a burst ends by its timer), and return the fault log.
std::string scripted_writes(uint64_t seed)
{
    use_fault({{"fault.seed", std::to_string(seed)},
               {"fault.max_write", "1000"},
               {"fault.eagain_probability", "0.2"},
               {"fault.eagain_ms", "1"}});
    Env env;
    Server &server = env.listen();
    server.echo = false;
    Endpoint &client = env.connect_both(server);
    client.manage_interest = false;
    const std::string chunk(3000, 'x');
    for (int i = 0; i < 150; ++i) {
        ssize_t n = -EAGAIN;
        REQUIRE(env.run_until([&] {
            n = client.write(chunk.data(), chunk.size());
            return n != -EAGAIN;
        }));
        REQUIRE(n > 0);
    }
    // How many retries a 1 ms burst swallows depends on the machine's speed
    // (a sanitizer build makes fewer): those calls draw nothing from the
    // seed's generator, but they count in the log's call numbers. Compare
    // the faults in order, without the numbers.
    return std::regex_replace(fault_test::fault_log(client), std::regex("write [0-9]+: "), "write: ");
}

} // namespace

TEST_CASE("the same seed and the same calls give the same fault log, and another seed another", "[determinism]")
{
    const std::string first = scripted_writes(42);
    const std::string again = scripted_writes(42);
    const std::string other = scripted_writes(43);
    INFO("seed 42:\n" << first << "\nseed 43:\n" << other);
    CHECK(first.find("-EAGAIN for 1 ms") != std::string::npos);
    CHECK(first.find("1000 of 3000 bytes") != std::string::npos);
    CHECK(first == again);
    CHECK(first != other);
}

TEST_CASE("short writes and short reads cut every call to fault.max_write / fault.max_read and lose nothing", "[data]")
{
    use_fault({{"fault.seed", "1"}, {"fault.max_write", "100"}, {"fault.max_read", "70"}});
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect_both(server);
    const std::string payload = make_payload(64 * 1024, 5);
    client.send(payload);
    REQUIRE(env.run_until([&] { return client.received.size() >= payload.size() || client.failed(); }));
    CHECK_FALSE(client.failed());
    CHECK(checksum(client.received) == checksum(payload));
    tw_fault_counts c = fault_test::counts(client);
    CHECK(c.short_writes >= payload.size() / 100 - 1);
    CHECK(c.short_reads > 0);
    CHECK(client.stats().write_would_block >= c.short_writes);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("latency holds bytes back by timers: an echo takes at least the latency of both directions", "[data][delay]")
{
    use_fault({{"fault.seed", "1"}, {"fault.tx_latency_ms", "40"}, {"fault.rx_latency_ms", "30"}});
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect_both(server);
    auto start = Clock::now();
    client.send("ping");
    REQUIRE(env.run_until([&] { return client.received.size() >= 4 || client.failed(); }));
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    CHECK(client.received == "ping");
    // Both ends are fault connections: each holds what it sends and what it receives.
    CHECK(elapsed.count() >= 2 * (40 + 30));
    CHECK(fault_test::counts(client).delayed_chunks >= 2);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("a stall delivers nothing for fault.stall_ms, then everything in order", "[data][delay]")
{
    use_fault({{"fault.seed", "1"},
               {"fault.stall_probability", "1"},
               {"fault.stall_ms", "150"},
               {"fault.target", "one-in:2"}}); // the accepted end (ordinal 2) stalls, the client not
    Env env;
    Server &server = env.listen();
    server.echo = false;
    Endpoint &client = env.connect_both(server);
    Endpoint &peer = *server.endpoints[0];
    const std::string payload = make_payload(256 * 1024, 9);
    auto start = Clock::now();
    client.send(payload);
    REQUIRE(env.run_until([&] { return peer.received.size() >= payload.size() || peer.failed(); }));
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    CHECK(checksum(peer.received) == checksum(payload));
    CHECK(elapsed.count() >= 150);
    CHECK(fault_test::counts(peer).stalls >= 1);
    CHECK(fault_test::counts(client).stalls == 0);
}

TEST_CASE("-EAGAIN bursts refuse writes for fault.eagain_ms and report no TW_EV_WRITE meanwhile", "[data][flow]")
{
    use_fault({{"fault.seed", "3"}, {"fault.eagain_probability", "1"}, {"fault.eagain_ms", "20"}});
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect_both(server);
    CHECK(client.write("a", 1) == -EAGAIN);
    CHECK(client.write("a", 1) == -EAGAIN); // within the burst: no new draw
    uint64_t writes_seen = 0;
    client.on_event = [&](Endpoint &, uint32_t events) {
        if (events & TW_EV_WRITE) writes_seen++;
        return true;
    };
    client.set_events(TW_EV_READ | TW_EV_WRITE);
    auto start = Clock::now();
    REQUIRE(env.run_until([&] { return writes_seen > 0; }));
    CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count() >= 15);
    tw_fault_counts c = fault_test::counts(client);
    CHECK(c.eagain_bursts == 1);
    CHECK(c.eagain_returns == 2);
}

TEST_CASE("connect faults: refused, timed out, and up-then-reset, each reported as that error", "[connect]")
{
    SECTION("refused")
    {
        use_fault({{"fault.connect_refuse_probability", "1"}});
        Env env;
        Server &server = env.listen();
        Endpoint &client = env.connect(server);
        REQUIRE(env.run_until([&] { return client.errors > 0; }));
        CHECK(client.error_code == -ECONNREFUSED);
        CHECK(client.connected == 0);
        CHECK(client.last_error.find("fault.connect_refuse_probability") != std::string::npos);
        CHECK(server.accepted == 0);
        CHECK(env.rule_violations() == "");
    }
    SECTION("timed out")
    {
        use_fault({{"fault.connect_timeout_probability", "1"}});
        Env env;
        Server &server = env.listen();
        auto start = Clock::now();
        Endpoint &client = env.connect(server.address, 200);
        REQUIRE(env.run_until([&] { return client.errors > 0; }));
        CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count() >= 200);
        CHECK(client.error_code == -ETIMEDOUT);
        CHECK(client.connected == 0);
        CHECK(env.rule_violations() == "");
    }
    SECTION("up, then reset")
    {
        use_fault({{"fault.connect_reset_probability", "1"}, {"fault.target", "one-in:3"}, {"fault.seed", "1"}});
        // Ordinals 1 and 2 (a client and its accepted end) are left alone: the next client is 3.
        Env env;
        Server &server = env.listen();
        env.connect_both(server);
        Endpoint &client = env.connect(server);
        REQUIRE(env.run_until([&] { return client.errors > 0; }));
        CHECK(client.connected == 1);
        CHECK(client.error_code == -ECONNRESET);
        CHECK(env.rule_violations() == "");
    }
}

TEST_CASE("a reset after fault.reset_after_bytes: the peer gets exactly those bytes, then an error or end-of-stream",
          "[data][reset]")
{
    // one-in:2: the client (ordinal 1) is left alone, its accepted end (ordinal 2) resets.
    use_fault({{"fault.reset_after_bytes", "10000"}, {"fault.target", "one-in:2"}, {"fault.seed", "1"}});
    Env env;
    Server &server = env.listen();
    server.echo = false;
    Endpoint &client = env.connect_both(server);
    Endpoint &writer = *server.endpoints[0];
    const std::string payload = make_payload(64 * 1024, 11);
    writer.send(payload);
    REQUIRE(env.run_until([&] { return client.failed() || client.eof; }));
    CHECK(client.received.size() == 10000);
    CHECK(client.received == payload.substr(0, 10000));
    CHECK(writer.write_error == -ECONNRESET);
    CHECK(fault_test::counts(writer).resets == 1);
    CHECK(fault_test::counts(client).resets == 0);
}

TEST_CASE("fault.target selects connections: one-in:N every Nth, port:P those to or from that port", "[target]")
{
    SECTION("one-in:3")
    {
        use_fault({{"fault.max_write", "1"}, {"fault.target", "one-in:3"}});
        Env env;
        Server &server = env.listen();
        std::vector<Endpoint *> clients;
        for (int i = 0; i < 3; ++i) clients.push_back(&env.connect_both(server));
        for (Endpoint *c : clients) c->send("abc");
        REQUIRE(env.run_until([&] {
            for (Endpoint *c : clients)
                if (c->received.size() < 3) return false;
            return true;
        }));
        // ordinals: client 1, accepted 2, client 3 (targeted), accepted 4, client 5, accepted 6 (targeted)
        CHECK(fault_test::counts(*clients[0]).short_writes == 0);
        CHECK(fault_test::counts(*clients[1]).short_writes > 0);
        CHECK(fault_test::counts(*clients[2]).short_writes == 0);
        CHECK(fault_test::totals().targeted == 2);
    }
    SECTION("port:P")
    {
        const uint16_t port = fault_test::free_port();
        use_fault({{"fault.max_write", "1"}, {"fault.target", "port:" + std::to_string(port)}});
        Env env;
        Server &faulty = env.listen(0, 0, make_address("127.0.0.1", port));
        Server &plain = env.listen();
        Endpoint &to_faulty = env.connect_both(faulty);
        Endpoint &to_plain = env.connect_both(plain);
        to_faulty.send("abc");
        to_plain.send("abc");
        REQUIRE(env.run_until([&] { return to_faulty.received.size() >= 3 && to_plain.received.size() >= 3; }));
        CHECK(fault_test::counts(to_faulty).short_writes > 0);
        CHECK(fault_test::counts(*faulty.endpoints[0]).short_writes > 0);
        CHECK(fault_test::counts(to_plain).short_writes == 0);
        CHECK(fault_test::totals().targeted == 2);
    }
}

TEST_CASE("under resets and refused connects, every echo gets every byte back in order or reports the error",
          "[data][reset][matrix]")
{
    use_fault({{"fault.seed", "2024"},
               {"fault.reset_probability", "0.005"},
               {"fault.max_write", "3000"},
               {"fault.connect_refuse_probability", "0.1"}});
    Env env;
    Server &server = env.listen();
    constexpr int kConns = 20;
    std::vector<Endpoint *> clients;
    std::vector<std::string> payloads;
    for (int i = 0; i < kConns; ++i) {
        payloads.push_back(make_payload(256 * 1024, 100 + i));
        Endpoint &c = env.connect(server);
        c.send(payloads.back());
        clients.push_back(&c);
    }
    REQUIRE(env.run_until([&] {
        for (int i = 0; i < kConns; ++i)
            if (clients[i]->received.size() < payloads[i].size() && !clients[i]->failed()) return false;
        return true;
    }));
    int complete = 0, failed = 0;
    for (int i = 0; i < kConns; ++i) {
        Endpoint &c = *clients[i];
        INFO("connection " << i << ": " << c.describe());
        // What arrived is a prefix of what was sent: nothing lost in the middle, reordered or duplicated.
        CHECK(c.received == payloads[i].substr(0, c.received.size()));
        if (c.received.size() == payloads[i].size()) complete++;
        else {
            // The error surfaced: TW_EV_ERROR (our reset, a refused connect) or a read or
            // write returning it (the peer's reset arriving over TCP).
            CHECK(c.failed());
            CHECK((c.error_code < 0 || c.read_error < 0 || c.write_error < 0));
            failed++;
        }
    }
    tw_fault_counts t = fault_test::totals();
    INFO("complete " << complete << ", failed " << failed << ", resets " << t.resets << ", refused "
                     << t.connects_refused);
    CHECK(complete > 0);
    CHECK(failed > 0);
    CHECK(t.resets + t.connects_refused > 0);
    CHECK(env.rule_violations() == "");
}

TEST_CASE("fault.* keys are checked without init, and mistakes name the key, value and origin", "[config]")
{
    auto refused = [](std::map<std::string, std::string> keys) -> std::string {
        try {
            check_transport_keys(fault_test::fault_config(keys));
        } catch (const ConfigError &e) {
            return e.what();
        }
        return "";
    };
    CHECK(refused({{"fault.max_write", "lots"}}).find("fault.max_write = 'lots' (test)") != std::string::npos);
    CHECK(refused({{"fault.reset_probability", "1.5"}}).find("probability") != std::string::npos);
    CHECK(refused({{"fault.profile", "wobbly"}}).find("flaky") != std::string::npos);
    CHECK(refused({{"fault.target", "port:x"}}).find("fault.target") != std::string::npos);
    CHECK(refused({{"fault.inner", "fault"}}).find("cannot wrap itself") != std::string::npos);
    CHECK(refused({{"fault.bogus", "1"}}).find("fault.bogus") != std::string::npos);
    CHECK(refused({{"fault.profile", "chaos"}, {"fault.max_write", "64k"}}) == "");
}

TEST_CASE("fault refuses at init an inner transport that cannot be loaded, and a host without transport_ops", "[init]")
{
    Config config = fault_test::fault_config({{"fault.inner", "nosuch"}});
    PluginLoadReport report;
    std::string why;
    auto t = Transport::from_plugin(PluginLibrary::open("fault", config, &report), config, &why);
    CHECK(t == nullptr);
    CHECK(why.find("fault.inner = nosuch") != std::string::npos);
    CHECK(why.find("twinwire-nosuch-abi") != std::string::npos);

    Config plain = fault_test::fault_config({});
    why.clear();
    t = Transport::from_plugin(PluginLibrary::open("fault", plain, &report), plain, &why,
                               offsetof(tw_host, transport_ops));
    CHECK(t == nullptr);
    CHECK(why.find("transport_ops") != std::string::npos);
    CHECK(why.find("1.2") != std::string::npos);
}

TEST_CASE("describe shows the inner transport, the seed and the totals injected (twinwire-info prints it)", "[info]")
{
    use_fault({{"fault.seed", "77"}, {"fault.max_write", "10"}});
    {
        Env env;
        Server &server = env.listen();
        Endpoint &client = env.connect_both(server);
        client.send("twenty bytes of text");
        REQUIRE(env.run_until([&] { return client.received.size() >= 20; }));
    }
    std::string text = transport().describe();
    INFO(text);
    CHECK(text.find("inner: tcp") != std::string::npos);
    CHECK(text.find("seed: 77") != std::string::npos);
    CHECK(text.find("short_writes=") != std::string::npos);
    CHECK(text.find("short_writes=0 ") == std::string::npos);
}
