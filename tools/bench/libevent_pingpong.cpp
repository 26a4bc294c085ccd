// SPDX-License-Identifier: MIT
// twinwire-libevent-pingpong: the TCP ping-pong a daemon author would write
// with libevent alone (bufferevents, an evconnlistener, TCP_NODELAY), as the
// anchor twinwire-bench's TCP path is compared with (tcp-compare.sh).
//
//   server: echo every byte back.
//   client: one message in flight, echoed; every round trip goes into the
//           same histogram and report as twinwire-bench's (one way = rt / 2).
//
// The measured path is libevent only; twinwire-bench's histogram and report
// code are linked for identical percentiles and output columns.
#include "histogram.hpp"
#include "sweep_report.hpp"

#include <CLI/CLI.hpp>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using twinwire::bench::Histogram;

constexpr uint64_t kWarmup = 10; // round trips not counted, as twinwire-bench

uint64_t now_ns()
{
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

void set_nodelay(evutil_socket_t fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

bool parse_address(const std::string &host, uint16_t port, sockaddr_in *out)
{
    std::memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    out->sin_port = htons(port);
    return inet_pton(AF_INET, host.c_str(), &out->sin_addr) == 1;
}

// ------------------------------------------------------------------ server

void on_echo_read(bufferevent *bev, void *)
{
    evbuffer_add_buffer(bufferevent_get_output(bev), bufferevent_get_input(bev));
}

void on_echo_event(bufferevent *bev, short what, void *)
{
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) bufferevent_free(bev);
}

void on_accept(evconnlistener *listener, evutil_socket_t fd, sockaddr *, int, void *)
{
    event_base *base = evconnlistener_get_base(listener);
    set_nodelay(fd);
    bufferevent *bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!bev) {
        evutil_closesocket(fd);
        return;
    }
    bufferevent_setcb(bev, on_echo_read, nullptr, on_echo_event, nullptr);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
}

int run_server(const std::string &listen, uint16_t port)
{
    sockaddr_in sa;
    if (!parse_address(listen, port, &sa)) {
        std::fprintf(stderr, "twinwire-libevent-pingpong: --listen %s is not an IPv4 address\n", listen.c_str());
        return 2;
    }
    event_base *base = event_base_new();
    evconnlistener *l = evconnlistener_new_bind(base, on_accept, nullptr, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, -1,
                                                reinterpret_cast<sockaddr *>(&sa), sizeof sa);
    if (!l) {
        std::fprintf(stderr, "twinwire-libevent-pingpong: cannot listen on %s:%u: %s\n", listen.c_str(), port,
                     std::strerror(errno));
        return 1;
    }
    event_base_dispatch(base);
    evconnlistener_free(l);
    event_base_free(base);
    return 0;
}

// ------------------------------------------------------------------ client

struct Client {
    event_base *base = nullptr;
    bufferevent *bev = nullptr;
    std::vector<char> payload;
    uint64_t iterations = 0; // 0: run for duration_ns
    uint64_t duration_ns = 0;
    uint64_t warmup_left = kWarmup;
    uint64_t sequence = 0;
    uint64_t sent_at = 0, start_ns = 0, end_ns = 0, deadline_ns = 0;
    Histogram histogram;
    std::string error;

    void send()
    {
        ++sequence;
        std::memcpy(payload.data(), &sequence, std::min(sizeof sequence, payload.size()));
        sent_at = now_ns();
        bufferevent_write(bev, payload.data(), payload.size());
    }

    void fail(std::string why)
    {
        error = std::move(why);
        event_base_loopbreak(base);
    }
};

void on_client_read(bufferevent *bev, void *arg)
{
    auto *c = static_cast<Client *>(arg);
    evbuffer *in = bufferevent_get_input(bev);
    const size_t size = c->payload.size();
    if (evbuffer_get_length(in) < size) return;
    const uint64_t now = now_ns();
    if (evbuffer_get_length(in) > size) return c->fail("the echo returned more bytes than one message");
    if (std::memcmp(evbuffer_pullup(in, static_cast<ev_ssize_t>(size)), c->payload.data(), size) != 0)
        return c->fail("the echo of round trip " + std::to_string(c->sequence) + " differs from what was sent");
    evbuffer_drain(in, size);
    if (c->warmup_left > 0) {
        if (--c->warmup_left == 0) {
            c->start_ns = now;
            c->deadline_ns = now + c->duration_ns;
        }
    } else {
        c->histogram.record(now - c->sent_at);
        c->end_ns = now;
        if (c->iterations ? c->histogram.count() >= c->iterations : now >= c->deadline_ns) {
            event_base_loopbreak(c->base);
            return;
        }
    }
    c->send();
}

void on_client_event(bufferevent *, short what, void *arg)
{
    auto *c = static_cast<Client *>(arg);
    if (what & BEV_EVENT_CONNECTED) {
        set_nodelay(bufferevent_getfd(c->bev));
        c->send();
    } else if (what & BEV_EVENT_EOF) {
        c->fail("the server closed the connection");
    } else if (what & BEV_EVENT_ERROR) {
        c->fail(std::string("connection: ") + evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    }
}

int run_client(const std::string &host, uint16_t port, size_t size, uint64_t iterations, double duration_s, bool csv)
{
    sockaddr_in sa;
    if (!parse_address(host, port, &sa)) {
        std::fprintf(stderr, "twinwire-libevent-pingpong: --host %s is not an IPv4 address\n", host.c_str());
        return 2;
    }
    Client c;
    c.base = event_base_new();
    c.payload.resize(size);
    for (size_t i = 0; i < size; ++i) c.payload[i] = static_cast<char>('a' + i % 26);
    c.iterations = iterations;
    c.duration_ns = static_cast<uint64_t>(duration_s * 1e9);
    c.bev = bufferevent_socket_new(c.base, -1, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(c.bev, on_client_read, nullptr, on_client_event, &c);
    bufferevent_enable(c.bev, EV_READ | EV_WRITE);
    if (bufferevent_socket_connect(c.bev, reinterpret_cast<sockaddr *>(&sa), sizeof sa) < 0) {
        std::fprintf(stderr, "twinwire-libevent-pingpong: connect to %s:%u failed\n", host.c_str(), port);
        return 1;
    }
    event_base_dispatch(c.base);
    bufferevent_free(c.bev);
    event_base_free(c.base);

    twinwire::bench::SweepReport report;
    report.mode = "client";
    report.target = host + ":" + std::to_string(port);
    report.transport = "raw libevent bufferevent (twinwire-libevent-pingpong)";
    twinwire::bench::LatencyResult result;
    result.size = size;
    result.connections = 1;
    result.round_trip_ns = c.histogram;
    result.seconds = c.end_ns > c.start_ns ? double(c.end_ns - c.start_ns) / 1e9 : 0;
    if (!c.error.empty()) result.errors.push_back(c.error);
    report.latency.push_back(std::move(result));
    std::string text = csv ? twinwire::bench::sweep_csv(report) : twinwire::bench::sweep_table(report);
    if (!csv) text.replace(0, std::strlen("twinwire-bench"), "twinwire-libevent-pingpong");
    std::fputs(text.c_str(), stdout);
    if (!c.error.empty()) std::fprintf(stderr, "twinwire-libevent-pingpong: %s\n", c.error.c_str());
    return c.error.empty() ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app{"64 B TCP ping-pong over plain libevent bufferevents: the anchor of tcp-compare.sh"};
    app.require_subcommand(1);
    uint16_t port = 0;
    std::string listen = "127.0.0.1", host;
    CLI::App *server = app.add_subcommand("server", "echo every byte back");
    server->add_option("--listen", listen, "IPv4 address to listen on (127.0.0.1)");
    server->add_option("-p,--port", port, "port")->required()->check(CLI::Range(1, 65535));
    size_t size = 64;
    uint64_t iterations = 0;
    double duration = 3;
    bool csv = false;
    CLI::App *client = app.add_subcommand("client", "ping-pong one message at a time and report the latency");
    client->add_option("--host", host, "the server's IPv4 address")->required();
    client->add_option("-p,--port", port, "port")->required()->check(CLI::Range(1, 65535));
    client->add_option("-s,--size", size, "message size in bytes (64)")->check(CLI::Range(size_t(1), size_t(64) << 20));
    client->add_option("-n,--iterations", iterations, "round trips to count (instead of -D)")
        ->check(CLI::Range(uint64_t(1), uint64_t(1) << 40));
    client->add_option("-D,--duration", duration, "seconds to count round trips (3)")
        ->check(CLI::Range(0.001, 86400.0));
    client->add_flag("--csv", csv, "twinwire-bench's --csv lines instead of the table");
    CLI11_PARSE(app, argc, argv);
    if (server->parsed()) return run_server(listen, port);
    return run_client(host, port, size, iterations, duration, csv);
}
