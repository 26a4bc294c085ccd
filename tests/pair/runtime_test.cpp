// SPDX-License-Identifier: MIT
// A daemon's test as its authors would write it: server and clients in one
// process over `transport = pair`, through the public C++ API, several
// loops, checksummed echo, and proof that pair (not a TCP fallback) ran.
#include "payload.hpp" // tools/conformance: payloads and their checksum

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <vector>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

Config pair_config(unsigned threads)
{
    Config c;
    c.set("transport", "pair");
    c.set("threads", std::to_string(threads));
    c.set("listen_address", "127.0.0.1");
    c.set("listen_port", "0");
    c.set("log_level", "warn");
    c.load_environment(); // TWINWIRE_PLUGIN_PATH: the build tree's plugin directories
    return c;
}

/// What the loops saw, gathered under one mutex (callbacks run on three threads).
struct Results {
    std::mutex mutex;
    std::vector<std::string> client_transports, server_transports, errors;
    std::set<unsigned> client_loops, server_loops;
    std::vector<uint64_t> sent_sums, received_sums;
    size_t done = 0;
};

} // namespace

TEST_CASE("a server and 12 clients in one process over transport = pair echo checksummed payloads across 3 loops, "
          "and every connection reports pair",
          "[pair][runtime]")
{
    constexpr unsigned kLoops = 3;
    constexpr unsigned kClients = 12;
    Runtime rt(pair_config(kLoops));
    rt.start();
    REQUIRE(rt.transport_name() == "pair");
    Results r;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        {
            std::lock_guard<std::mutex> lock(r.mutex);
            r.server_transports.push_back(c->transport_name());
            r.server_loops.insert(c->loop().index());
        }
        c->on_data([](Connection &conn, Buffer &in) { conn.write(in); });
    });
    REQUIRE(listener->port() != 0);
    CHECK(listener->transports() == std::vector<std::string>{"pair"});

    for (unsigned i = 0; i < kClients; i++) {
        auto payload = std::make_shared<std::string>(conformance::make_payload(200000 + 7919 * size_t(i), i + 1));
        ConnectOptions options("127.0.0.1", listener->port());
        options.loop = static_cast<int>(i % kLoops);
        rt.connect(options, [&, payload](const ConnectionPtr &c, const std::string &error) {
            std::lock_guard<std::mutex> lock(r.mutex);
            if (!c) {
                r.errors.push_back(error);
                if (++r.done == kClients) rt.stop(false);
                return;
            }
            r.client_transports.push_back(c->transport_name());
            r.client_loops.insert(c->loop().index());
            auto received = std::make_shared<std::string>();
            c->on_data([&, payload, received](Connection &conn, Buffer &in) {
                *received += in.take(in.size());
                if (received->size() < payload->size()) return;
                std::lock_guard<std::mutex> lock(r.mutex);
                r.sent_sums.push_back(conformance::checksum(*payload));
                r.received_sums.push_back(conformance::checksum(*received));
                conn.close();
                if (++r.done == kClients) rt.stop(true);
            });
            c->write(*payload);
        });
    }
    Timer watchdog(rt.loop(0), [&] { rt.stop(false); });
    watchdog.start(60s);
    rt.run();

    std::lock_guard<std::mutex> lock(r.mutex);
    INFO("errors: " << (r.errors.empty() ? "" : r.errors.front()));
    REQUIRE(r.done == kClients);
    CHECK(r.errors.empty());
    CHECK(r.client_transports == std::vector<std::string>(kClients, "pair"));
    CHECK(r.server_transports == std::vector<std::string>(kClients, "pair"));
    CHECK(r.client_loops.size() == kLoops);
    CHECK(r.server_loops.size() > 1); // accepted connections spread over the loops
    REQUIRE(r.received_sums.size() == kClients);
    std::multiset<uint64_t> sent(r.sent_sums.begin(), r.sent_sums.end());
    std::multiset<uint64_t> received(r.received_sums.begin(), r.received_sums.end());
    CHECK(received == sent);
    for (size_t i = 0; i < kClients; i++) CHECK(r.received_sums[i] == r.sent_sums[i]);
}

TEST_CASE("a client over pair that connects where nothing listens gets the refusal, not a TCP fallback",
          "[pair][runtime]")
{
    Runtime rt(pair_config(1));
    rt.start();
    std::string error;
    bool got_connection = false;
    rt.connect({"127.0.0.1", 9}, [&](const ConnectionPtr &c, const std::string &err) {
        got_connection = c != nullptr;
        error = err;
        rt.stop(false);
    });
    Timer watchdog(rt.loop(0), [&] { rt.stop(false); });
    watchdog.start(60s);
    rt.run();
    CHECK_FALSE(got_connection);
    CHECK_THAT(error, Catch::Contains("127.0.0.1:9"));
}
