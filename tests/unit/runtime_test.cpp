// SPDX-License-Identifier: MIT
// The runtime end to end over the built-in TCP backend: real loops, real sockets.
#include "log_capture.hpp"
#include "tcp_config.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <mutex>
#include <set>
#include <cstring>
#include <cstdlib>
#include <dirent.h>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

// Stops the runtime if a test hangs, and records that it had to.
struct Watchdog {
    Timer timer;
    bool fired = false;
    Watchdog(Runtime &rt, std::chrono::milliseconds after)
        : timer(rt.loop(0), [this, &rt] {
              fired = true;
              rt.stop(false);
          })
    {
        timer.start(after);
    }
};

std::string pattern(size_t n, unsigned seed)
{
    std::string s(n, '\0');
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s[i] = static_cast<char>(x);
    }
    return s;
}

} // namespace

TEST_CASE("a runtime over TCP echoes 4 MiB across worker threads and then stops", "[runtime]")
{
    Runtime rt(tcp_config(3));
    rt.start();
    auto listener =
        rt.listen({}, [](const ConnectionPtr &c) { c->on_data([](Connection &conn, Buffer &in) { conn.write(in); }); });
    REQUIRE(listener->port() != 0);
    CHECK(listener->transports() == std::vector<std::string>{"tcp"});

    const std::string sent = pattern(4 << 20, 1);
    std::string received;
    std::string error;
    std::vector<unsigned> server_loops;
    rt.connect({"127.0.0.1", listener->port()}, [&](const ConnectionPtr &c, const std::string &err) {
        if (!c) {
            error = err;
            rt.stop(false);
            return;
        }
        c->on_data([&](Connection &conn, Buffer &in) {
            received += in.take(in.size());
            if (received.size() >= sent.size()) {
                conn.close();
                rt.stop(true);
            }
        });
        c->write(sent);
    });
    Watchdog dog(rt, 20000ms);
    rt.run();
    CHECK_FALSE(dog.fired);
    CHECK(error.empty());
    CHECK(received.size() == sent.size());
    CHECK(received == sent);
}

TEST_CASE("a Buffer written to an idle connection goes to the transport at once, the rest is queued", "[runtime]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    size_t queued_small = 99, left_in_small = 99, queued_big = 0, left_in_big = 99;
    const std::string big = pattern(32 << 20, 3); // more than any socket buffer takes at once
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        Buffer small;
        small.append("ping", 4);
        c->write(small);
        left_in_small = small.size();
        queued_small = c->output_queued(); // 0: written in this call, not on the next loop turn
        Buffer large;
        large.append(big.data(), big.size());
        c->write(large);
        left_in_big = large.size();
        queued_big = c->output_queued();
        c->close();
    });
    std::string received;
    rt.connect({"127.0.0.1", listener->port()}, [&](const ConnectionPtr &c, const std::string &) {
        REQUIRE(c);
        c->on_data([&](Connection &, Buffer &in) { received += in.take(in.size()); });
        c->on_close([&](Connection &, const CloseInfo &) { rt.stop(true); });
    });
    Watchdog dog(rt, 20000ms);
    rt.run();
    CHECK_FALSE(dog.fired);
    CHECK(left_in_small == 0);
    CHECK(queued_small == 0);
    CHECK(left_in_big == 0);         // write(Buffer&) always takes the whole buffer
    CHECK(queued_big > 0);           // what the socket refused waits in the queue
    CHECK(queued_big < big.size());  // and what it took is gone from it
    CHECK(received == "ping" + big); // in order, nothing lost or doubled
}

TEST_CASE("connections are spread across the worker loops", "[runtime]")
{
    Runtime rt(tcp_config(2));
    rt.start();
    std::mutex mutex;
    std::set<unsigned> loops_used;
    int accepted = 0;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        std::lock_guard<std::mutex> lock(mutex);
        loops_used.insert(c->loop().index());
        CHECK(c->loop().in_loop_thread());
        if (++accepted == 8) rt.stop(true);
    });
    for (int i = 0; i < 8; ++i)
        rt.connect({"127.0.0.1", listener->port()}, [](const ConnectionPtr &, const std::string &) {});
    Watchdog dog(rt, 10000ms);
    rt.run();
    CHECK_FALSE(dog.fired);
    std::lock_guard<std::mutex> lock(mutex);
    CHECK(accepted == 8);
    CHECK(loops_used == std::set<unsigned>{0, 1});
}

TEST_CASE("close() lets queued output reach the peer before the connection ends", "[runtime]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    const std::string big = pattern(8 << 20, 2);
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        c->write(big);
        CHECK(c->output_queued() > 0); // more than a socket buffer: most of it is still queued
        c->close();
    });
    size_t got = 0;
    CloseInfo end;
    rt.connect({"127.0.0.1", listener->port()}, [&](const ConnectionPtr &c, const std::string &) {
        REQUIRE(c);
        c->on_data([&](Connection &, Buffer &in) {
            got += in.size();
            in.drain(in.size());
        });
        c->on_close([&](Connection &, const CloseInfo &info) {
            end = info;
            rt.stop(true);
        });
    });
    Watchdog dog(rt, 20000ms);
    rt.run();
    CHECK_FALSE(dog.fired);
    CHECK(got == big.size());
    CHECK(end.by_peer);
    CHECK(end.error == 0);
}

TEST_CASE("closing a connection inside its own data callback is safe", "[runtime]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    int server_closes = 0;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        c->on_data([](Connection &conn, Buffer &) { conn.abort(); });
        c->on_close([&](Connection &, const CloseInfo &) { ++server_closes; });
    });
    CloseInfo client_end;
    rt.connect({"127.0.0.1", listener->port()}, [&](const ConnectionPtr &c, const std::string &) {
        REQUIRE(c);
        c->on_close([&](Connection &, const CloseInfo &info) {
            client_end = info;
            rt.stop(true);
        });
        c->write("hello");
    });
    Watchdog dog(rt, 10000ms);
    rt.run();
    CHECK_FALSE(dog.fired);
    CHECK(server_closes == 1);
    CHECK(client_end.by_peer);
}

TEST_CASE("a connect to a port nobody listens on reports the refusal", "[runtime]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    // Bind and close to find a port that is free now.
    uint16_t port;
    {
        auto l = rt.listen({}, [](const ConnectionPtr &) {});
        port = l->port();
    }
    std::string error = "(not called)";
    rt.connect({"127.0.0.1", port}, [&](const ConnectionPtr &c, const std::string &err) {
        CHECK(!c);
        error = err;
        rt.stop(false);
    });
    Watchdog dog(rt, 10000ms);
    rt.run();
    CHECK(error.find("connect to 127.0.0.1:" + std::to_string(port) + " over tcp") == 0);
    CHECK(error.find("Connection refused") != std::string::npos);
}

TEST_CASE("writes beyond write_buffer_limit are refused, not queued", "[runtime]")
{
    Config c = tcp_config(1);
    c.set("write_buffer_limit", "64k");
    Runtime rt(c);
    rt.start();
    auto listener = rt.listen({}, [](const ConnectionPtr &conn) { conn->pause_reading(); });
    bool refused = false;
    size_t accepted = 0;
    rt.connect({"127.0.0.1", listener->port()}, [&](const ConnectionPtr &conn, const std::string &) {
        REQUIRE(conn);
        const std::string chunk(16 * 1024, 'x');
        for (int i = 0; i < 10000 && !refused; ++i) {
            if (conn->write(chunk)) accepted += chunk.size();
            else refused = true;
        }
        CHECK(conn->output_queued() <= 64 * 1024);
        rt.stop(false);
    });
    Watchdog dog(rt, 10000ms);
    rt.run();
    CHECK(refused);
    CHECK(accepted > 0);
}

TEST_CASE("SIGTERM stops a runtime that asked for it", "[runtime]")
{
    Runtime rt(tcp_config(2));
    rt.start();
    rt.stop_on_signals({SIGTERM});
    Timer t(rt.loop(0), [] { raise(SIGTERM); });
    t.start(50ms);
    Watchdog dog(rt, 10000ms);
    rt.run();
    CHECK_FALSE(dog.fired);
}

TEST_CASE("transport = rdma where RDMA cannot be used refuses to start, naming why", "[runtime]")
{
    Config c;
    c.set("transport", "rdma");
    c.set("plugin_path", "/nonexistent/twinwire-rdma-abi1.so");
    Runtime rt(c);
    CHECK_THROWS_WITH(rt.start(), Catch::Contains("transport = rdma (api) but RDMA plugin not loaded") &&
                                      Catch::Contains("/nonexistent/twinwire-rdma-abi1.so"));
}

TEST_CASE("transport = auto where RDMA cannot be used serves TCP and logs one line why", "[runtime]")
{
    Config c;
    c.set("plugin_path", "/nonexistent/twinwire-rdma-abi1.so");
    c.set("listen_port", "0");
    LogCapture logs;
    Runtime rt(c);
    rt.start();
    CHECK(rt.transport_name() == "tcp");
    CHECK(rt.transport_reason().find("falling back to TCP") != std::string::npos);
    auto lines = logs.from("transport");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].text.find("using tcp: RDMA plugin not loaded") == 0);
}

namespace {

bool kernel_has_rdma_device()
{
    DIR *dir = opendir("/sys/class/infiniband");
    if (!dir) return false;
    bool found = false;
    while (const dirent *e = readdir(dir)) found = found || e->d_name[0] != '.';
    closedir(dir);
    return found;
}

// The fallback line of transport = auto with the test plugin named rdma
// (its init finds no device), with the given extra settings.
std::vector<LogCapture::Line> auto_fallback_lines(const std::vector<std::pair<std::string, std::string>> &extra)
{
    const char *plugin = std::getenv("TW_TEST_PLUGIN_CHECKS_CONFIG");
    if (!plugin) FAIL("the test runner must set TW_TEST_PLUGIN_CHECKS_CONFIG");
    Config c;
    c.set("plugin_path", plugin);
    c.set("listen_port", "0");
    for (const auto &kv : extra) c.set(kv.first, kv.second);
    LogCapture logs;
    Runtime rt(c);
    rt.start();
    CHECK(rt.transport_name() == "tcp");
    return logs.from("transport");
}

} // namespace

// Only where the kernel lists no RDMA device: meson runs [no-rdma-device]
// cases as a test of their own, which reports SKIP with the reason elsewhere.
TEST_CASE("transport = auto falling back to TCP on a host without RDMA devices logs the reason at INFO",
          "[runtime][no-rdma-device]")
{
    if (kernel_has_rdma_device())
        FAIL("/sys/class/infiniband lists a device here, so the fallback is a warning (meson's test skips)");
    auto lines = auto_fallback_lines({});
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].level == LogLevel::Info);
    CHECK(lines[0].text.find("falling back to TCP") != std::string::npos);
}

TEST_CASE("transport = auto falling back to TCP although rdma.* settings were given logs the reason at WARN",
          "[runtime]")
{
    const LogLevel saved = twinwire::log::level();
    twinwire::log::set_level(LogLevel::Warn); // what an operator with log_level = warn sees
    auto lines = auto_fallback_lines({{"rdma.window", "8"}});
    twinwire::log::set_level(saved);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].level == LogLevel::Warn);
    CHECK(lines[0].text.find("using tcp: RDMA plugin refused") == 0);
    CHECK(lines[0].text.find("falling back to TCP") != std::string::npos);
}
