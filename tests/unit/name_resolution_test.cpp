// SPDX-License-Identifier: MIT
// Names: a connect resolves on its loop (evdns) and tries every address of
// the name in order; a listener on a name listens on every address; "*"
// takes IPv4 and IPv6 clients.  Runs in a private mount namespace whose
// /etc/hosts gives `localhost` both ::1 and 127.0.0.1 and whose
// /etc/resolv.conf names a server that is not there: no network is used.
#include "socket_client.hpp"
#include "tcp_config.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include "run_session.hpp"

#include <sched.h>
#include <sys/mount.h>

#include <cstdio>
#include <cstring>
#include <fstream>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

bool bind_file(const std::string &text, const char *target, std::string *why)
{
    std::string path = std::string("/tmp/twinwire-names-") + std::to_string(getpid()) + "-" + (target + 5);
    std::ofstream(path) << text;
    bool ok = mount(path.c_str(), target, nullptr, MS_BIND, nullptr) == 0;
    if (!ok) *why = std::string("bind-mount over ") + target + ": " + strerror(errno);
    unlink(path.c_str()); // the mount keeps the file
    return ok;
}

bool private_name_files(std::string *why)
{
    if (unshare(CLONE_NEWNS) != 0) return *why = std::string("unshare(CLONE_NEWNS): ") + strerror(errno), false;
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return *why = std::string("make / private: ") + strerror(errno), false;
    return bind_file("127.0.0.1 localhost\n::1 localhost\n", "/etc/hosts", why) &&
           bind_file("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n", "/etc/resolv.conf", why);
}

bool host_has_ipv6_loopback()
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
    if (fd >= 0) close(fd);
    return ok;
}

struct Outcome {
    std::string error;
    std::string peer;
    std::string echoed;
    int ticks = 0; ///< of a 5 ms timer on the same loop while connecting
};

Outcome echo_to(Runtime &rt, const std::string &name, uint16_t port)
{
    Outcome out;
    Timer tick(rt.loop(0), [&] { ++out.ticks; });
    tick.start(5ms, 5ms);
    rt.connect({name, port}, [&](const ConnectionPtr &c, const std::string &err) {
        tick.stop();
        if (!c) {
            out.error = err;
            rt.stop(false);
            return;
        }
        out.peer = c->peer_address();
        c->on_data([&](Connection &conn, Buffer &in) {
            out.echoed += in.take(in.size());
            conn.close();
            rt.stop(true);
        });
        c->write("ping");
    });
    Timer dog(rt.loop(0), [&] { rt.stop(false); });
    dog.start(20s);
    rt.run();
    return out;
}

/// Connect to `first` and `second` at once from the runtime that serves
/// `port`; both echoed.
bool echo_both(Runtime &rt, const std::string &first, const std::string &second, uint16_t port)
{
    int echoed = 0;
    for (const std::string &name : {first, second})
        rt.connect({name, port}, [&](const ConnectionPtr &c, const std::string &err) {
            if (!c) {
                FAIL_CHECK(name << ": " << err);
                rt.stop(false);
                return;
            }
            c->on_data([&](Connection &conn, Buffer &in) {
                if (in.take(in.size()) == "ping" && ++echoed == 2) rt.stop(true);
                conn.close();
            });
            c->write("ping");
        });
    Timer dog(rt.loop(0), [&] { rt.stop(false); });
    dog.start(20s);
    rt.run();
    return echoed == 2;
}

Outcome echo_through_one_family(const char *server_address, const std::string &name)
{
    Runtime rt(tcp_config(1));
    rt.start();
    auto listener = rt.listen({server_address, 0}, [](const ConnectionPtr &c) {
        c->on_data([](Connection &conn, Buffer &in) { conn.write(in); });
    });
    return echo_to(rt, name, listener->port());
}

} // namespace

TEST_CASE("a connect to a name with an IPv6 and an IPv4 address reaches a server that listens on either one only",
          "[names]")
{
    Outcome v4 = echo_through_one_family("127.0.0.1", "localhost");
    INFO(v4.error);
    CHECK(v4.echoed == "ping");
    CHECK(v4.peer.rfind("127.0.0.1:", 0) == 0);
    Outcome v6 = echo_through_one_family("::1", "localhost");
    INFO(v6.error);
    CHECK(v6.echoed == "ping");
    CHECK(v6.peer.rfind("[::1]:", 0) == 0);
}

TEST_CASE("a connect that fails on every address of a name names each address and why", "[names]")
{
    // A port nobody listens on: take one and give it back.
    uint16_t port;
    {
        Runtime probe(tcp_config(1));
        probe.start();
        port = probe.listen({"127.0.0.1", 0}, [](const ConnectionPtr &) {})->port();
    }
    Runtime rt(tcp_config(1));
    rt.start();
    Outcome out = echo_to(rt, "localhost", port);
    INFO(out.error);
    CHECK(out.error.find("connect to localhost:" + std::to_string(port) + " over tcp: ") == 0);
    CHECK(out.error.find("[::1]:" + std::to_string(port) + ": ") != std::string::npos);
    CHECK(out.error.find("127.0.0.1:" + std::to_string(port) + ": ") != std::string::npos);
}

TEST_CASE("a name that does not resolve is a clear error, and the loop kept running while it was looked up", "[names]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    Outcome out = echo_to(rt, "no-such-host.invalid", 7);
    INFO(out.error);
    CHECK(out.error.find("cannot resolve 'no-such-host.invalid'") != std::string::npos);
    CHECK(out.ticks > 0); // the lookup (a name server that is not there) did not block the loop
}

TEST_CASE("a listener on a name listens on every address it has, on one port", "[names]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    auto listener = rt.listen({"localhost", 0}, [](const ConnectionPtr &c) {
        c->on_data([](Connection &conn, Buffer &in) { conn.write(in); });
    });
    CHECK(echo_both(rt, "::1", "127.0.0.1", listener->port()));
}

TEST_CASE("a listener on * takes IPv4 and IPv6 clients (one dual-stack socket)", "[names]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    auto listener = rt.listen(
        {"*", 0}, [](const ConnectionPtr &c) { c->on_data([](Connection &conn, Buffer &in) { conn.write(in); }); });
    CHECK(listener->address() == "*");
    CHECK(echo_both(rt, "::1", "127.0.0.1", listener->port()));
}

int main(int argc, char **argv)
{
    std::string why;
    if (!host_has_ipv6_loopback()) why = "no IPv6 loopback (::1) on this host";
    else if (!private_name_files(&why)) why = "no private mount namespace for /etc/hosts: " + why;
    if (!why.empty()) {
        std::printf("SKIP: %s\n", why.c_str());
        return 77;
    }
    return twinwire::test::run_catch_session(argc, argv);
}
