// SPDX-License-Identifier: MIT
// Failures carry a code a program can branch on (issue 12 item 2): start-up
// (StartupError::code()), connects (ConnectError::code) and how connections
// end (CloseInfo::code), over real loops and real sockets.
#include "log_capture.hpp"
#include "socket_client.hpp"
#include "tcp_config.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <netinet/in.h>
#include <optional>
#include <sys/socket.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

// Runs the runtime until `done` or 10 s; stops it either way.
void run_until(Runtime &rt, const std::function<bool()> &done)
{
    Timer poll(rt.loop(0), [&] {
        if (done()) rt.stop(false);
    });
    poll.start(1ms, 5ms);
    Timer watchdog(rt.loop(0), [&] { rt.stop(false); });
    watchdog.start(10s);
    rt.run();
}

std::optional<ConnectError> connect_error(Config config, const ConnectOptions &options)
{
    Runtime rt(std::move(config));
    rt.start();
    std::optional<ConnectError> got;
    rt.connect(options, [&](const ConnectionPtr &c, const ConnectError &error) {
        CHECK(static_cast<bool>(c) == !error);
        got = error;
    });
    run_until(rt, [&] { return got.has_value(); });
    return got;
}

// A raw listening socket whose accept queue is full: further SYNs are dropped.
struct FullBacklog {
    int listener = -1;
    std::vector<int> queued;
    uint16_t port = 0;
    FullBacklog()
    {
        listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (bind(listener, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || listen(listener, 0) != 0 ||
            getsockname(listener, reinterpret_cast<sockaddr *>(&a), &len) != 0)
            FAIL("cannot set up a listener: " << strerror(errno));
        port = ntohs(a.sin_port);
        for (int i = 0; i < 4; ++i) {
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
            connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
            queued.push_back(fd);
        }
        usleep(100000); // the handshakes that can complete do
    }
    ~FullBacklog()
    {
        for (int fd : queued) ::close(fd);
        ::close(listener);
    }
};

} // namespace

TEST_CASE("a listen on a port already in use throws a StartupError whose code is errc::address_in_use", "[errors]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    auto first = rt.listen({}, [](const ConnectionPtr &) {});
    ListenOptions again;
    again.port = first->port();
    try {
        auto second = rt.listen(again, [](const ConnectionPtr &) {});
        FAIL("the second listen on port " << first->port() << " succeeded");
    } catch (const StartupError &e) {
        CHECK(e.code() == errc::address_in_use);
        CHECK(e.code() == std::errc::address_in_use); // the standard condition too
        CHECK(std::string(e.what()).find("Address already in use") != std::string::npos);
    }
}

TEST_CASE("configuration mistakes are StartupErrors with a code: unknown key, bad value, unreadable file", "[errors]")
{
    Config c;
    setenv("TWINWIRE_FOO", "1", 1);
    try {
        c.load_environment();
        FAIL("TWINWIRE_FOO was accepted");
    } catch (const StartupError &e) { // a ConfigError, caught as what it is
        CHECK(e.code() == errc::unknown_config_key);
        CHECK(std::string(e.what()).find("TWINWIRE_FOO") != std::string::npos);
    }
    unsetenv("TWINWIRE_FOO");
    try {
        c.set("listen_port", "seventy");
        FAIL("a bad port was accepted");
    } catch (const ConfigError &e) {
        CHECK(e.code() == errc::bad_config);
    }
    try {
        c.load_file("/nonexistent/twinwire.conf");
        FAIL("a missing file was read");
    } catch (const ConfigError &e) {
        CHECK(e.code() == std::errc::no_such_file_or_directory);
    }
}

TEST_CASE("a StartupError copied, assigned or moved keeps its code and message", "[errors]")
{
    const ConfigError original(errc::unknown_config_key, "x.conf:1: unknown key 'nope'");
    ConfigError copy = original;
    StartupError assigned(errc::bad_config, "other");
    assigned = copy;
    ConfigError moved = std::move(copy);
    auto same = [](const StartupError &e) {
        return e.code() == errc::unknown_config_key && std::string(e.what()) == "x.conf:1: unknown key 'nope'";
    };
    CHECK(same(original));
    CHECK(same(copy)); // NOLINT(bugprone-use-after-move): moving copies, so the source keeps its code
    CHECK(same(assigned));
    CHECK(same(moved));
    try {
        throw StartupError(std::make_error_code(std::errc::permission_denied), "bind: Permission denied");
    } catch (const StartupError &e) {
        CHECK(e.code() == std::errc::permission_denied);
    }
}

TEST_CASE("a transport named alone that cannot be loaded makes start() throw errc::transport_unavailable", "[errors]")
{
    Config c = tcp_config(1);
    c.set("transport", "nosuchtransport");
    c.set("plugin_path", "/nonexistent");
    Runtime rt(c);
    try {
        rt.start();
        FAIL("start() succeeded without the transport");
    } catch (const StartupError &e) {
        CHECK(e.code() == errc::transport_unavailable);
    }
}

TEST_CASE("calls out of order throw StartupErrors with errc::not_started", "[errors]")
{
    Runtime rt(tcp_config(1));
    try {
        rt.connect({"127.0.0.1", 1}, [](const ConnectionPtr &, const ConnectError &) {});
        FAIL("connect() before start() was accepted");
    } catch (const StartupError &e) {
        CHECK(e.code() == errc::not_started);
    }
}

TEST_CASE("connect() and listen() refuse an empty handler at once instead of dropping the result later", "[errors]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    CHECK_THROWS_AS(rt.connect({"127.0.0.1", 1}, nullptr), std::invalid_argument);
    CHECK_THROWS_AS((void)rt.listen({}, nullptr), std::invalid_argument);
}

TEST_CASE("a connect where nothing listens fails with errc::connection_refused", "[errors]")
{
    uint16_t port;
    {
        Runtime probe(tcp_config(1));
        probe.start();
        port = probe.listen({}, [](const ConnectionPtr &) {})->port(); // closed at once: nothing listens there
    }
    auto error = connect_error(tcp_config(1), {"127.0.0.1", port});
    REQUIRE(error);
    CHECK(error->code == errc::connection_refused);
    CHECK(error->code == std::errc::connection_refused);
    CHECK(error->message.find("refused") != std::string::npos);
}

TEST_CASE("a connect that is never answered fails with errc::timed_out", "[errors]")
{
    FullBacklog silent;
    ConnectOptions o{"127.0.0.1", silent.port};
    o.timeout_ms = 200;
    auto error = connect_error(tcp_config(1), o);
    REQUIRE(error);
    INFO(error->message);
    CHECK(error->code == errc::timed_out);
    CHECK(error->code == std::errc::timed_out);
}

TEST_CASE("a connect to a name that does not resolve fails with errc::resolve_failed", "[errors]")
{
    auto error = connect_error(tcp_config(1), {"no-such-host.invalid", 7});
    REQUIRE(error);
    INFO(error->message);
    CHECK(error->code == errc::resolve_failed);
}

TEST_CASE("a connect over a transport that is not loaded fails with errc::transport_not_loaded", "[errors]")
{
    ConnectOptions o{"127.0.0.1", 7};
    o.transport = "nosuchtransport";
    auto error = connect_error(tcp_config(1), o);
    REQUIRE(error);
    CHECK(error->code == errc::transport_not_loaded);
}

// Needs a network namespace (root or user namespaces): meson runs [netns]
// cases as a test of their own, which reports SKIP with the reason without one.
TEST_CASE("a connect to a network without a route fails with errc::unreachable", "[errors][netns]")
{
    // In a network namespace of its own a child has only lo: no route to 10.0.0.1.
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (unshare(CLONE_NEWNET) != 0) _exit(200);
        std::optional<ConnectError> error = connect_error(tcp_config(1), {"10.0.0.1", 7});
        _exit(error ? error->code.value() : 201);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 200)
        FAIL("cannot create a network namespace here (meson's test of [netns] cases skips)");
    CHECK(WEXITSTATUS(status) == static_cast<int>(errc::unreachable));
}

TEST_CASE("how a connection ended has a code: peer closed, peer reset, closed, aborted, flush timed out", "[errors]")
{
    Config config = tcp_config(1);
    config.set("shutdown_timeout_ms", "200");
    Runtime rt(config);
    rt.start();
    std::map<std::string, CloseInfo> ends; // by the first bytes each client sent
    std::atomic<bool> finished{false};
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        auto name = std::make_shared<std::string>();
        c->on_data([name](Connection &conn, Buffer &in) {
            *name = in.take(in.size());
            if (*name == "close") conn.close();
            if (*name == "abort") conn.abort();
            if (*name == "stuck") {
                conn.write(std::string(64 << 20, 'x')); // more than a client that never reads takes
                conn.close();
            }
        });
        c->on_close([&ends, name](Connection &, const CloseInfo &info) { ends[*name] = info; });
    });
    std::thread clients([&] {
        SocketClient eof(listener->port()), reset(listener->port()), closed(listener->port()),
            aborted(listener->port()), stuck(listener->port());
        eof.send_all("eof");
        usleep(50000);
        eof.shutdown_write();
        reset.send_all("reset");
        usleep(50000);
        linger l{1, 0}; // close with RST
        setsockopt(reset.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        ::close(reset.fd);
        reset.fd = -1;
        closed.send_all("close");
        aborted.send_all("abort");
        stuck.send_all("stuck");
        closed.read_to_end(2000);
        aborted.read_to_end(2000);
        while (!finished) usleep(10000); // never reading from `stuck` until every end was seen
    });
    // Stops once the five ends are known (the stuck one after shutdown_timeout_ms).
    Timer poll(rt.loop(0), [&] {
        if (ends.size() < 5) return;
        finished = true;
        rt.stop(false);
    });
    poll.start(1ms, 10ms);
    Timer watchdog(rt.loop(0), [&] {
        finished = true;
        rt.stop(false);
    });
    watchdog.start(20s);
    rt.run();
    clients.join();
    REQUIRE(ends.count("eof"));
    CHECK(ends["eof"].code == errc::peer_closed);
    CHECK(ends["eof"].by_peer);
    REQUIRE(ends.count("reset"));
    CHECK(ends["reset"].code == errc::peer_reset);
    CHECK(ends["reset"].code == std::errc::connection_reset);
    REQUIRE(ends.count("close"));
    CHECK(ends["close"].code == errc::closed_locally);
    CHECK(ends["close"].error == 0);
    REQUIRE(ends.count("abort"));
    CHECK(ends["abort"].code == errc::aborted);
    REQUIRE(ends.count("stuck"));
    INFO(ends["stuck"].reason);
    CHECK(ends["stuck"].code == errc::timed_out);
}

TEST_CASE("a Listener dropped at once stops listening and the log says so after 'listening'", "[errors]")
{
    LogCapture logs;
    Config config = tcp_config(1);
    config.set("log_level", "info");
    Runtime rt(config);
    rt.start();
    uint16_t port = rt.listen({}, [](const ConnectionPtr &) {})->port(); // the Listener dies here
    bool listening = false, stopped = false;
    for (const auto &line : logs.from("listen")) {
        listening |= line.text.find("listening on 127.0.0.1:" + std::to_string(port)) == 0;
        stopped |= listening && line.text.find("no longer listening on 127.0.0.1:" + std::to_string(port)) == 0;
    }
    CHECK(listening);
    CHECK(stopped);
    CHECK(connect_loopback(port) < 0);
}

TEST_CASE("the error category names the codes and maps them to standard conditions", "[errors]")
{
    std::error_code code = errc::peer_reset;
    CHECK(std::string(code.category().name()) == "twinwire");
    CHECK(code.message() == "connection reset by peer");
    CHECK(code == std::errc::connection_reset);
    CHECK(std::error_code(errc::callback_threw) != std::errc::connection_reset);
    CHECK(code_from_transport(-ECONNREFUSED) == errc::connection_refused);
    CHECK(code_from_transport(-TW_EPEERDEAD) == errc::timed_out);
    CHECK(code_from_transport(-EIO) == errc::transport_error);
}
