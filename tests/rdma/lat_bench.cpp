// SPDX-License-Identifier: MIT
// A ping-pong over the plugin's C vtable on the framework's loop, without
// the Connection layer, its buffers or twinwire-bench: the latency of the
// transport and the event loop alone, for tools/lab/latency-layers.sh
// (beside ib_send_lat -e and twinwire-bench):
//   rdma-tests --child lat-bench-server SERVER_IP [tcp]
//   rdma-tests --child lat-bench-client SERVER_IP CLIENT_IP PORT SIZE ITERATIONS [tcp]
// ("tcp": the built-in TCP transport instead, for the host's check of the
// tool; fault-matrix, built on every host, has the same child modes.)
// The server writes back every byte as it arrives; the client sends SIZE
// bytes, waits for all of them, and sends again from the callback that
// completed the message.  It prints "one_way_p50_us VALUE" (half the median
// round trip, as twinwire-bench's one_way_p50_us).
#include "rdma_test.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <time.h>

namespace twinwire::rdmatest {

namespace {

constexpr size_t kMaxMessage = 64 * 1024;

uint64_t clock_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

} // namespace

/// Write `len` bytes now; what the transport does not take waits in the
/// endpoint's queue (never in a 64 B ping-pong, whose ring has room).
void write_all(conformance::Endpoint &e, const char *p, size_t len)
{
    if (e.queued() == 0) {
        ssize_t n = e.write(p, len);
        if (n > 0) {
            p += n;
            len -= static_cast<size_t>(n);
        }
    }
    if (len) e.send(std::string_view(p, len));
}

/// Echo what arrives at once; errors, connect and write events go to the
/// endpoint's own handling.
bool lean_echo(conformance::Endpoint &e, uint32_t events)
{
    if (!(events & TW_EV_READ) || (events & (TW_EV_ERROR | TW_EV_CONNECTED))) return true;
    static char buf[kMaxMessage];
    for (;;) {
        ssize_t n = e.read(buf, sizeof buf);
        if (n == -EAGAIN) return e.queued() > 0; // a backlog: the endpoint flushes it and asks for TW_EV_WRITE
        if (n <= 0) return true;                 // end of stream and errors: the endpoint's own handling
        write_all(e, buf, static_cast<size_t>(n));
    }
}

int child_lat_bench_server()
{
    using namespace conformance;
    Env env;
    Server &server = env.listen();
    server.configure = [](Endpoint &e) { e.on_event = lean_echo; };
    printf("%u\n", port_of(server.address));
    fflush(stdout);
    uint64_t turns = 0;
    env.run_until(
        [&] {
            if (++turns % 1024 == 0) close_finished(env, server, 0); // not on every turn: it is measured
            return false;
        },
        std::chrono::hours(2));
    return 0;
}

int child_lat_bench_client(int, char **argv)
{
    using namespace conformance;
    // argv: prog --child lat-bench-client SERVER CLIENT PORT SIZE ITERATIONS
    sockaddr_storage addr = make_address(argv[3]);
    set_port(addr, static_cast<uint16_t>(std::atoi(argv[5])));
    size_t size = std::strtoull(argv[6], nullptr, 0);
    uint64_t iterations = std::strtoull(argv[7], nullptr, 0);
    if (size == 0 || size > kMaxMessage || iterations == 0) {
        fprintf(stderr, "lat-bench-client: SIZE 1..%zu, ITERATIONS > 0\n", kMaxMessage);
        return 2;
    }
    Env env;
    Endpoint &client = env.connect(addr, 10000);
    if (!env.run_until([&] { return client.connected > 0 || client.failed(); }) || client.failed()) {
        fprintf(stderr, "lat-bench-client: not connected: %s\n", client.last_error.c_str());
        return 1;
    }
    std::vector<char> out(size, 'p'), in(kMaxMessage);
    std::vector<uint64_t> rtts;
    rtts.reserve(iterations);
    size_t got = 0;
    uint64_t sent_at = clock_ns();
    bool bad = false;
    client.on_event = [&](Endpoint &e, uint32_t events) {
        if (!(events & TW_EV_READ) || (events & TW_EV_ERROR)) return true;
        for (;;) {
            ssize_t n = e.read(in.data(), in.size());
            if (n == -EAGAIN) return e.queued() > 0; // as lean_echo
            if (n <= 0) return true;
            got += static_cast<size_t>(n);
            if (got > size || std::any_of(in.begin(), in.begin() + n, [](char c) { return c != 'p'; })) bad = true;
            if (got < size) continue;
            uint64_t now = clock_ns();
            rtts.push_back(now - sent_at);
            got = 0;
            if (rtts.size() == iterations) return false;
            sent_at = now;
            write_all(e, out.data(), size);
        }
    };
    write_all(client, out.data(), size);
    bool ok =
        env.run_until([&] { return bad || client.failed() || rtts.size() == iterations; }, std::chrono::minutes(10));
    if (!ok || bad || client.failed()) {
        fprintf(stderr, "lat-bench-client: %s after %zu of %llu round trips: %s\n",
                bad  ? "wrong bytes"
                : ok ? "failed"
                     : "timed out",
                rtts.size(), static_cast<unsigned long long>(iterations), client.describe().c_str());
        return 1;
    }
    std::sort(rtts.begin(), rtts.end());
    printf("one_way_p50_us %.2f\n", double(rtts[rtts.size() / 2]) / 2000.0);
    return 0;
}

} // namespace twinwire::rdmatest
