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
        callback_exceptions::run(c, getenv("SOFTROCE_SERVER_IP"), getenv("SOFTROCE_CLIENT_IP"), 120);
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
