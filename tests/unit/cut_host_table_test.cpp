// SPDX-License-Identifier: MIT
// A plugin of this build under a host table cut to ABI 1.0 with garbage
// past `size` (cut_host_table_plugin.cpp, "cuthost", wrapping the file in
// TW_CUT_HOST_INNER): it serves, logs and refuses without calling a member
// past `size`.  A call there runs a trap that aborts, failing the test.
// Run once per plugin (meson): [serves] with tcp and pair, [refuses] with
// fault, which needs the ABI 1.2 member transport_ops.
#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

std::string env(const char *name)
{
    const char *v = std::getenv(name);
    if (!v) FAIL(std::string("the test runner must set ") + name);
    return v;
}

Config cut_host_config()
{
    Config c;
    c.set("transport", "cuthost");
    c.set("plugin_path", env("TW_CUT_HOST_PLUGIN"));
    c.set("listen_port", "0");
    c.set("log_level", "debug"); // the TCP backend's debug lines go through vlog when the host has it
    return c;
}

// A TCP port bound on 127.0.0.1 but not listening while this lives: a
// connect there is refused.
struct RefusingPort {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    uint16_t port = 0;
    RefusingPort()
    {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        REQUIRE(fd >= 0);
        REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
        REQUIRE(getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0);
        port = ntohs(a.sin_port);
    }
    ~RefusingPort() { close(fd); }
};

} // namespace

TEST_CASE("a plugin given a host table cut to ABI 1.0, garbage past size, echoes, logs and reports a refused connect",
          "[cut-host][serves]")
{
    Runtime rt(cut_host_config());
    rt.start();
    REQUIRE(rt.transport_name() == "cuthost");
    auto listener =
        rt.listen({}, [](const ConnectionPtr &c) { c->on_data([](Connection &conn, Buffer &in) { conn.write(in); }); });
    const uint16_t port = listener->port();
    std::string echoed, refused;
    std::atomic<int> pending{2};
    auto done = [&] {
        if (--pending == 0) rt.stop(false);
    };
    rt.connect(ConnectOptions("127.0.0.1", port), [&](const ConnectionPtr &c, const std::string &error) {
        if (!c) {
            echoed = "connect failed: " + error;
            done();
            return;
        }
        c->on_data([&](Connection &conn, Buffer &in) {
            echoed += in.take(in.size());
            if (echoed.size() >= 5) conn.close();
        });
        c->on_close([&](Connection &, const CloseInfo &) { done(); });
        c->write("hello");
    });
    // A port nothing listens on: the failure is logged at debug (tcp: log_line).
    RefusingPort nobody;
    rt.connect(ConnectOptions("127.0.0.1", nobody.port), [&](const ConnectionPtr &c, const std::string &error) {
        refused = c ? "connected" : error;
        if (c) c->close();
        done();
    });
    Timer watchdog(rt.loop(0), [&] { rt.stop(false); });
    watchdog.start(30s);
    rt.run();
    CHECK(pending == 0);
    CHECK(echoed == "hello");
    CHECK_FALSE(refused.empty());
    CHECK(refused != "connected");
}

TEST_CASE("fault given a host table cut to ABI 1.0, garbage past size, refuses with the reason", "[cut-host][refuses]")
{
    Runtime rt(cut_host_config());
    try {
        rt.start();
        FAIL("fault started on a host table without transport_ops");
    } catch (const StartupError &e) {
        CHECK(e.code() == errc::transport_unavailable);
        CHECK_THAT(e.what(), Catch::Contains("fault needs the transport_ops service of ABI 1.2"));
    }
}
