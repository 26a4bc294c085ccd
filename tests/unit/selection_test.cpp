// SPDX-License-Identifier: MIT
// Selection by name over real loops and sockets: a plugin with a name of its
// own (the TCP backend as "tcpcopy", found by name on the search path) is
// chosen alone, in lists, and for single connections.
#include "log_capture.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

std::string plugin_dir()
{
    const char *v = std::getenv("TW_TEST_NAMED_PLUGIN_DIR");
    if (!v) FAIL("the test runner must set TW_TEST_NAMED_PLUGIN_DIR");
    return v;
}

Config named_config(const std::string &transport)
{
    Config c;
    c.set("transport", transport);
    c.set("plugin_path", "/nonexistent/first:" + plugin_dir());
    c.set("listen_port", "0");
    return c;
}

struct Exchange {
    std::string server_transport; ///< as the accepted connection reports it
    std::string client_transport;
    std::string client_fallback;
    std::string reply;
    std::string error;
};

// One listener, one connect with `options`, "ping" echoed back.
Exchange ping(Runtime &rt, const Listener &listener, ConnectOptions options)
{
    Exchange out;
    options.address = "127.0.0.1";
    options.port = listener.port();
    rt.connect(options, [&](const ConnectionPtr &c, const std::string &err) {
        if (!c) {
            out.error = err;
            rt.stop(false);
            return;
        }
        out.client_transport = c->transport_name();
        out.client_fallback = c->fallback_reason();
        c->on_data([&](Connection &conn, Buffer &in) {
            out.reply += in.take(in.size());
            if (out.reply.size() >= 4) {
                conn.close();
                rt.stop(true);
            }
        });
        c->write(std::string("ping"));
    });
    Timer dog(rt.loop(0), [&] {
        out.error = "timed out";
        rt.stop(false);
    });
    dog.start(10000ms);
    rt.run();
    return out;
}

AcceptHandler echo_into(std::string *server_transport)
{
    return [server_transport](const ConnectionPtr &c) {
        *server_transport = c->transport_name();
        c->on_data([](Connection &conn, Buffer &in) { conn.write(in); });
    };
}

} // namespace

TEST_CASE("transport = NAME loads twinwire-NAME-abiN.so from the search path and counts its connections under NAME",
          "[selection]")
{
    Runtime rt(named_config("tcpcopy"));
    rt.start();
    CHECK(rt.transport_name() == "tcpcopy");
    CHECK(rt.selection().in_use_names() == "tcpcopy");
    CHECK(rt.transport_reason().find(plugin_dir() + "/twinwire-tcpcopy-abi1.so") != std::string::npos);
    std::string server_transport;
    auto listener = rt.listen({}, echo_into(&server_transport));
    CHECK(listener->transports() == std::vector<std::string>{"tcpcopy"});
    Exchange x = ping(rt, *listener, {});
    CHECK(x.error.empty());
    CHECK(x.reply == "ping");
    CHECK(x.client_transport == "tcpcopy");
    CHECK(server_transport == "tcpcopy");
}

TEST_CASE("a single name that cannot be loaded stops start-up with the reason", "[selection]")
{
    Runtime rt(named_config("nosuch"));
    CHECK_THROWS_AS(rt.start(), StartupError);
    Runtime again(named_config("nosuch"));
    CHECK_THROWS_WITH(again.start(), Catch::Contains("transport = nosuch (api) but plugin 'nosuch' not loaded") &&
                                         Catch::Contains("twinwire-nosuch-abi1.so not found"));
}

TEST_CASE("a list is tried in order: each transport skipped is logged once, connects prefer the first", "[selection]")
{
    LogCapture logs;
    Runtime rt(named_config("nosuch,tcpcopy,tcp"));
    rt.start();
    auto lines = logs.from("transport");
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].text.find("skipping nosuch: plugin 'nosuch' not loaded") == 0);
    CHECK(lines[1].text.find("using tcpcopy: transport = nosuch,tcpcopy,tcp (api); in use: tcpcopy+tcp") == 0);
    // tcpcopy is TCP underneath: it cannot bind the port TCP already has,
    // so it is skipped on this address with a warning; the last one listed
    // (tcp) must listen.  tcpcopy's connect speaks to it all the same.
    std::string server_transport;
    auto listener = rt.listen({}, echo_into(&server_transport));
    CHECK(listener->transports() == std::vector<std::string>{"tcp"});
    auto warnings = logs.from("listen");
    REQUIRE(!warnings.empty());
    CHECK(warnings[0].text.find("not listening over tcpcopy on this address") != std::string::npos);
    Exchange x = ping(rt, *listener, {});
    CHECK(x.error.empty());
    CHECK(x.client_transport == "tcpcopy");
    CHECK(server_transport == "tcp");
}

TEST_CASE("a list of which nothing loads stops start-up naming every reason", "[selection]")
{
    Runtime rt(named_config("nosuch,gone"));
    CHECK_THROWS_WITH(rt.start(), Catch::Contains("none of the listed transports can be used") &&
                                      Catch::Contains("plugin 'nosuch' not loaded") &&
                                      Catch::Contains("plugin 'gone' not loaded"));
}

TEST_CASE("TCP is used only when listed: a list without it never serves TCP", "[selection]")
{
    Runtime rt(named_config("nosuch,tcpcopy"));
    rt.start();
    std::string server_transport;
    auto listener = rt.listen({}, echo_into(&server_transport));
    CHECK(listener->transports() == std::vector<std::string>{"tcpcopy"});
    Exchange x = ping(rt, *listener, {});
    CHECK(x.client_transport == "tcpcopy");
}

TEST_CASE("a failed connect moves down the list for that connection and says why", "[selection]")
{
    // Nobody listens on port 1: tcpcopy's connect is refused, the same
    // connect is retried over tcp (refused too), and each step is reported.
    Runtime rt(named_config("tcpcopy,tcp"));
    rt.start();
    LogCapture logs;
    std::string error;
    rt.connect({"127.0.0.1", 1}, [&](const ConnectionPtr &c, const std::string &err) {
        error = c ? "connected?" : err;
        rt.stop(false);
    });
    Timer dog(rt.loop(0), [&] { rt.stop(false); });
    dog.start(10000ms);
    rt.run();
    auto lines = logs.from("connect");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].text.find("tcpcopy connect to 127.0.0.1:1 failed") == 0);
    CHECK(lines[0].text.find("trying the next transport") != std::string::npos);
    CHECK(error.find("connect to 127.0.0.1:1 over tcp: ") == 0);
}

TEST_CASE("ConnectOptions::transport takes any loaded name, and a clear error for one not loaded", "[selection]")
{
    Runtime rt(named_config("tcpcopy,tcp"));
    rt.start();
    std::string server_transport;
    auto listener = rt.listen({}, echo_into(&server_transport));
    ConnectOptions tcp_only;
    tcp_only.transport = "tcp";
    Exchange x = ping(rt, *listener, tcp_only);
    CHECK(x.error.empty());
    CHECK(x.client_transport == "tcp");
    CHECK(server_transport == "tcp");
    CHECK(x.client_fallback.empty());

    Runtime rt2(named_config("tcpcopy"));
    rt2.start();
    auto listener2 = rt2.listen({}, echo_into(&server_transport));
    ConnectOptions unknown;
    unknown.transport = "rdma";
    Exchange y = ping(rt2, *listener2, unknown);
    CHECK(y.error == "connect to 127.0.0.1:" + std::to_string(listener2->port()) +
                         ": transport 'rdma' is not loaded (loaded: tcp, tcpcopy)");
}

TEST_CASE("a plugin file declaring another transport is refused for this name", "[selection]")
{
    Config c;
    c.set("transport", "rdma");
    c.set("plugin_path", plugin_dir() + "/twinwire-tcpcopy-abi1.so");
    CHECK_THROWS_WITH(select_transports(c), Catch::Contains("it is the plugin of transport 'tcpcopy', not 'rdma'"));
}

TEST_CASE("TWINWIRE_PLUGIN_PATH is the only place looked at: a typo loads nothing else", "[selection]")
{
    setenv("TWINWIRE_PLUGIN_PATH", (plugin_dir() + "-typo").c_str(), 1);
    Config c;
    PluginLoadReport report;
    auto lib = PluginLibrary::open("tcpcopy", c, &report);
    unsetenv("TWINWIRE_PLUGIN_PATH");
    CHECK(!lib);
    REQUIRE(report.attempts.size() == 1);
    CHECK(report.attempts[0].path == plugin_dir() + "-typo/twinwire-tcpcopy-abi1.so");
    REQUIRE(report.search_dirs.size() == 1);
    CHECK(report.search_dirs[0] == plugin_dir() + "-typo (environment TWINWIRE_PLUGIN_PATH)");
}

TEST_CASE("plugin_path lists directories, searched in order; the first file found decides", "[selection]")
{
    Config c;
    c.set("plugin_path", "/nonexistent/a:" + plugin_dir() + ":/nonexistent/b");
    PluginLoadReport report;
    auto lib = PluginLibrary::open("tcpcopy", c, &report);
    REQUIRE(lib);
    REQUIRE(report.attempts.size() == 2);
    CHECK(report.attempts[0].path == "/nonexistent/a/twinwire-tcpcopy-abi1.so");
    CHECK(report.attempts[1].path == plugin_dir() + "/twinwire-tcpcopy-abi1.so");
    CHECK(report.attempts[1].result == "loaded");
}
