// SPDX-License-Identifier: MIT
// tcp.keepalive and its timings reach the sockets of accepted and outgoing
// connections (read back with getsockopt from the kernel).
#include "socket_client.hpp"
#include "tcp_config.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <dirent.h>
#include <netinet/tcp.h>

#include <thread>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

struct Keepalive {
    int on = -1, idle = -1, interval = -1, count = -1;
};

// The socket of this process whose peer is at `peer_port` on loopback.
int socket_with_peer_port(uint16_t peer_port)
{
    for (int fd = 3; fd < 4096; ++fd) {
        sockaddr_in a{};
        socklen_t len = sizeof a;
        if (getpeername(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0 && a.sin_family == AF_INET &&
            ntohs(a.sin_port) == peer_port)
            return fd;
    }
    return -1;
}

Keepalive keepalive_of(int fd)
{
    Keepalive k;
    socklen_t len = sizeof(int);
    getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &k.on, &len);
    getsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &k.idle, &len);
    getsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &k.interval, &len);
    getsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &k.count, &len);
    return k;
}

uint16_t port_of(const std::string &text) { return static_cast<uint16_t>(std::stoi(text.substr(text.rfind(':') + 1))); }

} // namespace

TEST_CASE("tcp.keepalive with its idle, interval and count reaches accepted and outgoing TCP sockets",
          "[tcp][keepalive]")
{
    Config config = tcp_config(1);
    config.set("tcp.keepalive", "yes");
    config.set("tcp.keepalive_idle_s", "7");
    config.set("tcp.keepalive_interval_s", "3");
    config.set("tcp.keepalive_count", "4");
    Runtime rt(config);
    rt.start();
    Keepalive accepted, outgoing;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        accepted = keepalive_of(socket_with_peer_port(port_of(c->peer_address())));
    });
    rt.connect({"127.0.0.1", listener->port()}, [&](const ConnectionPtr &c, const std::string &) {
        if (c) outgoing = keepalive_of(socket_with_peer_port(listener->port()));
    });
    Timer stop(rt.loop(0), [&] { rt.stop(false); });
    stop.start(500ms);
    rt.run();
    CHECK(accepted.on == 1);
    CHECK(accepted.idle == 7);
    CHECK(accepted.interval == 3);
    CHECK(accepted.count == 4);
    CHECK(outgoing.on == 1);
    CHECK(outgoing.idle == 7);
    CHECK(outgoing.interval == 3);
    CHECK(outgoing.count == 4);
}

TEST_CASE("without tcp.keepalive TCP sockets have no keepalive", "[tcp][keepalive]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    Keepalive accepted;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        accepted = keepalive_of(socket_with_peer_port(port_of(c->peer_address())));
    });
    SocketClient client(listener->port());
    Timer stop(rt.loop(0), [&] { rt.stop(false); });
    stop.start(300ms);
    rt.run();
    CHECK(accepted.on == 0);
}
