// SPDX-License-Identifier: MIT
// What idle connections cost, and what they do to the latency of active
// ones (issue 41), for tools/bench/idle-connections.sh in the guest:
//   rdma-tests --child idle-bench SERVER_IP CLIENT_IP IDLE ACTIVE ROUNDS ITERATIONS
// One process holds both ends, across the guest's wire.  ACTIVE connections
// ping-pong 64 B, ITERATIONS round trips each (after 1000 not recorded),
// alone; then IDLE more
// connections open (512 at a time) and each echoes 64 B; the ACTIVE ones ping-pong again
// among them; the idle ones echo once more and close.  ROUNDS times, so the
// "alone" and "among idle" runs alternate.  It prints one line per run:
//   alone p50_us A p99_us B            (round trips of every active connection)
//   among_idle p50_us A p99_us B
// and, with the idle ones open and each end idle:
//   memory ends E in_use_per_end N registered_per_end N mr_per_end N mr_added_per_end N
// (the transport's counters, and the kernel's `rdma resource show mr`; the
// last is what the idle connections added, divided by their ends).
#include "rdma_test.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <time.h>

namespace twinwire::rdmatest {

namespace {

using conformance::Endpoint;
using conformance::Env;
using conformance::Server;

constexpr size_t kMessage = 64;
/// Round trips before each measured run, not recorded: a ring lapped twice
/// within rdma.ring_idle_ms grows ×4 up to 64 KiB (busy growth), about 640
/// round trips of 64 B from 4 KiB, and shrinks back after ring_idle_ms
/// without data, which opening thousands of idle connections takes.  So
/// both runs start on the rings steady traffic has.
constexpr uint64_t kWarmup = 1000;

uint64_t idle_bench_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

/// Ping-pong on every one of `active` at once; every round trip's time.
bool ping_pong(Env &env, const std::vector<Endpoint *> &active, uint64_t iterations, std::vector<uint64_t> *rtts)
{
    struct State {
        size_t got = 0;
        uint64_t sent_at = 0, done = 0;
        bool bad = false;
    };
    std::vector<State> st(active.size());
    std::string out(kMessage, 'p');
    for (size_t i = 0; i < active.size(); ++i) {
        active[i]->on_event = [&, i](Endpoint &e, uint32_t events) {
            if (!(events & TW_EV_READ) || (events & TW_EV_ERROR)) return true;
            char in[4096];
            for (;;) {
                ssize_t n = e.read(in, sizeof in);
                if (n == -EAGAIN) return e.queued() > 0;
                if (n <= 0) return true;
                State &s = st[i];
                s.got += static_cast<size_t>(n);
                if (s.got > kMessage || std::any_of(in, in + n, [](char c) { return c != 'p'; })) s.bad = true;
                if (s.got < kMessage) continue;
                uint64_t now = idle_bench_ns();
                rtts->push_back(now - s.sent_at);
                s.got = 0;
                if (++s.done == iterations) return false;
                s.sent_at = now;
                write_all(e, out.data(), kMessage);
            }
        };
    }
    env.on_loop(0, [&] {
        for (size_t i = 0; i < active.size(); ++i) {
            st[i].sent_at = idle_bench_ns();
            write_all(*active[i], out.data(), kMessage);
        }
    });
    bool ok = env.run_until(
        [&] {
            for (size_t i = 0; i < active.size(); ++i)
                if (st[i].bad || active[i]->failed()) return true;
            for (const State &s : st)
                if (s.done < iterations) return false;
            return true;
        },
        std::chrono::minutes(20));
    for (Endpoint *e : active) e->on_event = nullptr;
    for (size_t i = 0; i < active.size(); ++i)
        if (st[i].bad || active[i]->failed()) {
            fprintf(stderr, "idle-bench: active connection %zu: %s\n", i,
                    st[i].bad ? "wrong bytes" : active[i]->describe().c_str());
            return false;
        }
    return ok;
}

void print_run(const char *name, std::vector<uint64_t> &rtts)
{
    std::sort(rtts.begin(), rtts.end());
    auto at = [&](double q) { return double(rtts[std::min(rtts.size() - 1, size_t(q * double(rtts.size())))]) / 1e3; };
    printf("%s p50_us %.1f p99_us %.1f round_trips %zu\n", name, at(0.50), at(0.99), rtts.size());
    fflush(stdout);
}

/// Each of `ends` sends 64 B and gets it back; how many did.
size_t echo_each(Env &env, const std::vector<Endpoint *> &ends, uint32_t seed)
{
    std::vector<std::string> want(ends.size());
    env.on_loop(0, [&] {
        for (size_t i = 0; i < ends.size(); ++i) {
            want[i] = ends[i]->received + std::string(kMessage, char('a' + (seed + i) % 26));
            ends[i]->send(std::string_view(want[i]).substr(want[i].size() - kMessage));
        }
    });
    env.run_until(
        [&] {
            for (size_t i = 0; i < ends.size(); ++i)
                if (!ends[i]->failed() && ends[i]->received.size() < want[i].size()) return false;
            return true;
        },
        std::chrono::minutes(10));
    size_t ok = 0;
    for (size_t i = 0; i < ends.size(); ++i) ok += !ends[i]->failed() && ends[i]->received == want[i];
    return ok;
}

} // namespace

int child_idle_bench(int, char **argv)
{
    // argv: prog --child idle-bench SERVER CLIENT IDLE ACTIVE ROUNDS ITERATIONS
    const size_t idle = std::strtoull(argv[5], nullptr, 0);
    const size_t active_n = std::strtoull(argv[6], nullptr, 0);
    const unsigned rounds = unsigned(std::strtoul(argv[7], nullptr, 0));
    const uint64_t iterations = std::strtoull(argv[8], nullptr, 0);
    if (active_n == 0 || rounds == 0 || iterations == 0) {
        fprintf(stderr, "idle-bench: ACTIVE, ROUNDS and ITERATIONS must be > 0\n");
        return 2;
    }
    Env env;
    Server &server = env.listen();
    server.configure = [](Endpoint &e) { e.on_event = lean_echo; };
    // In batches below the listener's accept backlog (1024): a burst past
    // it is refused, as it should be.
    auto open = [&](size_t n, std::vector<Endpoint *> *out) {
        constexpr size_t kBatch = 512;
        size_t first = out->size();
        bool up = true;
        for (size_t done = 0; done < n && up; done += kBatch) {
            size_t batch = out->size();
            for (size_t i = done; i < std::min(n, done + kBatch); ++i)
                out->push_back(&env.connect(server.address, 600000));
            up = env.run_until(
                [&] {
                    for (size_t i = batch; i < out->size(); ++i)
                        if (!(*out)[i]->failed() && !(*out)[i]->connected) return false;
                    return true;
                },
                std::chrono::minutes(10));
        }
        size_t failed = 0;
        Endpoint *example = (*out)[first];
        for (size_t i = first; i < out->size(); ++i)
            if ((*out)[i]->failed() && failed++ == 0) example = (*out)[i];
        if (!up || failed) {
            fprintf(stderr, "idle-bench: %zu of %zu connections failed%s; the first: %s\n", failed, n,
                    up ? "" : " or timed out", example->describe().c_str());
            return false;
        }
        return true;
    };
    std::vector<Endpoint *> active;
    if (!open(active_n, &active)) return 1;
    const size_t ends_active = 2 * active_n;
    int status = 0;
    // One measured run: warm-up round trips first (kWarmup), then ITERATIONS recorded.
    auto measure = [&](std::vector<uint64_t> *rtts) {
        std::vector<uint64_t> warmup;
        return ping_pong(env, active, kWarmup, &warmup) && ping_pong(env, active, iterations, rtts);
    };
    for (unsigned round = 0; round < rounds && status == 0; ++round) {
        std::vector<uint64_t> rtts;
        if (!measure(&rtts)) return 1;
        print_run("alone", rtts);
        if (idle == 0) continue;
        long long mr_before = registered_by_this_process();
        std::vector<Endpoint *> idlers;
        if (!open(idle, &idlers)) return 1;
        size_t echoed = echo_each(env, idlers, round);
        printf("echoed %zu of %zu idle connections\n", echoed, idle);
        if (echoed != idle) status = 1;
        // Memory with every connection idle (ring_idle_ms has not passed:
        // the 64 B echo never grows a ring).
        tw_transport_stats st = transport_stats(env);
        long long mr = registered_by_this_process();
        uint64_t ends = uint64_t(st.connections_open);
        printf("memory ends %llu in_use_per_end %llu registered_per_end %llu mr_per_end %lld mr_added_per_end %lld\n",
               static_cast<unsigned long long>(ends), static_cast<unsigned long long>(st.registered_in_use / ends),
               static_cast<unsigned long long>(st.registered_bytes / ends), mr < 0 ? -1 : mr / (long long)ends,
               mr < 0 || mr_before < 0 ? -1 : (mr - mr_before) / (long long)(ends - ends_active));
        fflush(stdout);
        rtts.clear();
        if (!measure(&rtts)) return 1;
        print_run("among_idle", rtts);
        echoed = echo_each(env, idlers, round + 7);
        printf("echoed again %zu of %zu idle connections\n", echoed, idle);
        if (echoed != idle) status = 1;
        // Close them; the next round starts alone again.
        env.on_loop(0, [&] {
            for (Endpoint *e : idlers) e->close();
        });
        env.run_until(
            [&] {
                close_finished(env, server, 0);
                return uint64_t(transport_stats(env).connections_open) <= ends_active;
            },
            std::chrono::minutes(10));
    }
    return status;
}

} // namespace twinwire::rdmatest
