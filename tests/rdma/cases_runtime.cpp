// SPDX-License-Identifier: MIT
// The plugin under the framework's Runtime: RDMA when both ends speak it,
// per-connection fallback to TCP when the server has no RDMA listener.
#include "rdma_test.hpp"
#include "../unit/callback_exceptions.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

struct Outcome {
    std::string transport;
    std::string fallback;
    std::string error;
    std::string echoed;
};

Outcome echo_through_runtime(uint16_t port)
{
    Config c;
    c.set("transport", "auto");
    c.set("threads", "1");
    c.set("log_level", "warn");
    c.set("connect_timeout_ms", "20000");
    Runtime rt(c);
    rt.start();
    Outcome out;
    CHECK(rt.transport_name() == "rdma");
    ConnectOptions opt;
    opt.address = getenv("SOFTROCE_SERVER_IP");
    opt.port = port;
    opt.source_address = getenv("SOFTROCE_CLIENT_IP");
    rt.connect(opt, [&](const ConnectionPtr &conn, const std::string &err) {
        if (!conn) {
            out.error = err;
            rt.stop(false);
            return;
        }
        out.transport = conn->transport_name();
        out.fallback = conn->fallback_reason();
        conn->on_data([&](Connection &self, Buffer &in) {
            out.echoed += in.take(in.size());
            if (out.echoed.size() >= 5) {
                self.close();
                rt.stop(true);
            }
        });
        conn->write("hello");
    });
    Timer dog(rt.loop(0), [&] { rt.stop(false); });
    dog.start(120s);
    rt.run();
    return out;
}

uint16_t start_server(const char *mode, pid_t *pid)
{
    std::string line;
    *pid = twinwire::rdmatest::start_child({"runtime-echo", mode, getenv("SOFTROCE_SERVER_IP")}, &line);
    return static_cast<uint16_t>(std::atoi(line.c_str()));
}

} // namespace

TEST_CASE("in auto mode a client reaches an RDMA-capable server over RDMA", "[rdma][runtime]")
{
    twinwire::rdmatest::use_settings({});
    twinwire::conformance::release_transport();
    pid_t pid = 0;
    uint16_t port = start_server("auto", &pid);
    REQUIRE(port != 0);
    Outcome out = echo_through_runtime(port);
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    INFO("error: " << out.error << "; fallback: " << out.fallback);
    CHECK(out.error.empty());
    CHECK(out.transport == "rdma");
    CHECK(out.fallback.empty());
    CHECK(out.echoed == "hello");
}

TEST_CASE("in auto mode a client falls back to TCP, per connection, when the server has no RDMA listener",
          "[rdma][runtime]")
{
    twinwire::conformance::release_transport();
    pid_t pid = 0;
    uint16_t port = start_server("tcp", &pid);
    REQUIRE(port != 0);
    Outcome out = echo_through_runtime(port);
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    INFO("error: " << out.error);
    CHECK(out.error.empty());
    CHECK(out.transport == "tcp");
    CHECK_FALSE(out.fallback.empty());
    CHECK(out.echoed == "hello");
}

TEST_CASE("over RDMA an exception from each kind of callback closes only its connection with "
          "errc::callback_threw and the runtime keeps serving",
          "[rdma][runtime][exceptions]")
{
    twinwire::rdmatest::use_settings({});
    twinwire::conformance::release_transport();
    Config c;
    c.set("transport", "rdma");
    c.set("threads", "1");
    c.set("log_level", "warn");
    c.set("connect_timeout_ms", "20000");
    callback_exceptions::Report r =
        callback_exceptions::run(c, getenv("SOFTROCE_SERVER_IP"), getenv("SOFTROCE_CLIENT_IP"), 120, 1u << 20);
    INFO("stuck at: " << r.stuck_at << "; connect error: " << r.connect_error);
    REQUIRE(r.stuck_at.empty());
    REQUIRE(r.connect_error.empty());
    for (const char *kind : {"accept", "data", "drain", "eof"}) {
        INFO("kind " << kind << ": " << r.server_ends[kind].reason);
        CHECK(r.server_ends[kind].code == errc::callback_threw);
        CHECK(r.client_ends[kind].by_peer);
    }
    INFO("connect: " << r.client_ends["connect"].reason);
    CHECK(r.client_ends["connect"].code == errc::callback_threw);
    CHECK(r.echoed == "echo");
    CHECK(r.client_ends["echo"].code == errc::closed_locally);
}

TEST_CASE("over RDMA, read_until cuts records, the write watermarks call on_write_low and a read timeout closes a "
          "silent connection",
          "[rdma][runtime][io]")
{
    twinwire::rdmatest::use_settings({});
    twinwire::conformance::release_transport();
    Config c;
    c.set("transport", "rdma");
    c.set("threads", "1");
    c.set("log_level", "warn");
    c.set("connect_timeout_ms", "20000");
    c.set("write_high_watermark", "256k");
    c.set("write_low_watermark", "64k");
    Runtime rt(c);
    rt.start();
    std::vector<std::string> lines;
    CloseInfo server_end;
    bool blocked = false;
    int lows = 0;
    auto listener = rt.listen({getenv("SOFTROCE_SERVER_IP"), 0}, [&](const ConnectionPtr &s) {
        s->on_close([&](Connection &, const CloseInfo &info) {
            server_end = info;
            rt.stop(true);
        });
        s->on_write_low([&](Connection &conn) {
            ++lows;
            conn.set_read_timeout(500ms); // from now on the client says nothing
        });
        auto next = std::make_shared<std::function<void(Connection &)>>();
        *next = [&, next](Connection &conn) {
            conn.read_until("\r\n", 64, [&, next](Connection &self, std::string line) {
                lines.push_back(line);
                if (lines.size() < 3) {
                    (*next)(self);
                    return;
                }
                *next = nullptr;
                // Far more than the client's ring and our send ring take while it does not read.
                for (int i = 0; i < 64 && !self.write_blocked(); ++i) self.write(std::string(64 * 1024, 'w'));
                blocked = self.write_blocked();
            });
        };
        (*next)(*s);
    });
    ConnectOptions opt;
    opt.address = getenv("SOFTROCE_SERVER_IP");
    opt.port = listener->port();
    opt.source_address = getenv("SOFTROCE_CLIENT_IP");
    std::string error;
    size_t received = 0;
    ConnectionPtr client;
    Timer start_reading(rt.loop(0), [&] {
        if (client) client->resume_reading();
    });
    rt.connect(opt, [&](const ConnectionPtr &conn, const std::string &err) {
        if (!conn) {
            error = err;
            rt.stop(false);
            return;
        }
        client = conn;
        conn->pause_reading(); // the server's output piles up above its high watermark
        conn->on_data([&](Connection &, Buffer &in) { received += in.size(), in.drain(in.size()); });
        conn->write("one\r\ntw");
        conn->write("o\r\nthree\r\n");
        start_reading.start(1s);
    });
    Timer dog(rt.loop(0), [&] { rt.stop(false); });
    dog.start(120s);
    rt.run();
    INFO("error: " << error << "; server end: " << server_end.reason);
    CHECK(error.empty());
    CHECK(lines == std::vector<std::string>{"one\r\n", "two\r\n", "three\r\n"});
    CHECK(blocked);
    CHECK(lows == 1);
    CHECK(received > 256 * 1024);
    CHECK(server_end.code == errc::timed_out);
    CHECK(server_end.reason == "read_timeout_ms: nothing received for 500 ms");
}

TEST_CASE("over RDMA, a client still writing a request the server refused and closed on reads the server's reply",
          "[rdma][runtime]")
{
    // The server answers after 64 KiB and closes while the client still
    // writes (its rings are 32 KiB at first): the client's writes fail with
    // -EPIPE, and the reply that arrived before the close must reach it
    // (twinwire-kvd refusing an oversized request is this case).
    Config c;
    c.set("transport", "rdma");
    c.set("threads", "1");
    c.set("log_level", "warn");
    Runtime rt(c);
    rt.start();
    const std::string reply = "-ERR request too large\r\n";
    auto listener = rt.listen({getenv("SOFTROCE_SERVER_IP"), 0}, [&](const ConnectionPtr &s) {
        auto got = std::make_shared<size_t>(0);
        s->on_data([got, reply](Connection &self, Buffer &in) {
            *got += in.size();
            in.drain(in.size());
            if (*got >= 64 * 1024) {
                self.write(reply);
                self.close();
            }
        });
    });
    ConnectOptions opt;
    opt.address = getenv("SOFTROCE_SERVER_IP");
    opt.port = listener->port();
    opt.source_address = getenv("SOFTROCE_CLIENT_IP");
    std::string error, received;
    CloseInfo end;
    rt.connect(opt, [&](const ConnectionPtr &conn, const std::string &err) {
        if (!conn) {
            error = err;
            rt.stop(false);
            return;
        }
        conn->on_data([&](Connection &, Buffer &in) { received += in.take(in.size()); });
        conn->on_close([&](Connection &, const CloseInfo &info) {
            end = info;
            rt.stop(false);
        });
        conn->write(std::string(size_t(8) << 20, 'x')); // far more than the server will read
    });
    Timer dog(rt.loop(0), [&] { rt.stop(false); });
    dog.start(120s);
    rt.run();
    INFO("error: " << error << "; client end: " << end.reason);
    CHECK(error.empty());
    CHECK(received == reply);
    CHECK(end.code == errc::peer_closed);
}
