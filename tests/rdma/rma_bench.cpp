// SPDX-License-Identifier: MIT
// A minimal one-sided bandwidth tool over the plugin's C vtable, for
// tools/bench/perftest-compare.sh --rma (beside ib_read_bw / ib_write_bw):
//   rdma-tests --child rma-bench-server SERVER_IP
//   rdma-tests --child rma-bench-client SERVER_IP CLIENT_IP PORT read|write SIZE ITERATIONS [DEPTH]
// The server exposes 4 MiB to each connection and sends the descriptor as
// the stream's first bytes; the client keeps DEPTH operations of SIZE bytes
// in flight on one lent (registered) buffer, as perftest reuses one buffer,
// and prints "mib_per_s VALUE".
#include "rdma_test.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace twinwire::rdmatest {

namespace {
constexpr size_t kExposed = size_t(4) << 20;
}

int child_rma_bench_server()
{
    using namespace conformance;
    Env env;
    Server &server = env.listen();
    server.echo = false;
    std::vector<uint8_t> memory(kExposed, 0x5a);
    std::set<Endpoint *> served;
    printf("%u\n", port_of(server.address));
    fflush(stdout);
    env.run_until(
        [&] {
            for (Endpoint *e : server.endpoints) {
                if (served.count(e) || !e->connected || e->closed) continue;
                served.insert(e);
                tw_rma_exposure *x = nullptr;
                uint8_t desc[TW_RMA_DESC_MAX];
                size_t len = 0;
                int rc = e->ops().rma_expose(e->conn(), memory.data(), memory.size(), TW_RMA_READ | TW_RMA_WRITE, &x,
                                             desc, &len);
                if (rc) {
                    fprintf(stderr, "rma_expose: %d %s\n", rc, e->ops().last_error(e->conn()));
                    continue;
                }
                e->send(std::string(reinterpret_cast<char *>(desc), len));
            }
            close_finished(env, server, 0);
            return false;
        },
        std::chrono::hours(2));
    return 0;
}

int child_rma_bench_client(int argc, char **argv)
{
    using namespace conformance;
    // argv: prog --child rma-bench-client SERVER CLIENT PORT OP SIZE ITERATIONS [DEPTH]
    sockaddr_storage addr = make_address(argv[3]);
    set_port(addr, static_cast<uint16_t>(std::atoi(argv[5])));
    bool read = std::string(argv[6]) == "read";
    size_t size = std::strtoull(argv[7], nullptr, 0);
    uint64_t iterations = std::strtoull(argv[8], nullptr, 0);
    uint64_t depth = argc > 9 ? std::strtoull(argv[9], nullptr, 0) : 16;
    if (size == 0 || size > kExposed || iterations == 0 || depth == 0) {
        fprintf(stderr, "rma-bench-client: SIZE 1..%zu, ITERATIONS and DEPTH > 0\n", kExposed);
        return 2;
    }
    Env env;
    Endpoint &client = env.connect(addr, 10000);
    if (!env.run_until([&] { return client.received.size() >= 28 || client.failed(); }) || client.failed()) {
        fprintf(stderr, "rma-bench-client: no descriptor: %s\n", client.last_error.c_str());
        return 1;
    }
    std::vector<uint8_t> desc(client.received.begin(), client.received.end());
    tw_buf lent = TW_BUF_INIT;
    int rc = client.ops().rma_mem_get(client.conn(), size, &lent);
    if (rc) {
        fprintf(stderr, "rma_mem_get: %d %s\n", rc, client.ops().last_error(client.conn()));
        return 1;
    }
    struct Counter {
        uint64_t done = 0;
        int error = 0;
    } counter;
    auto on_done = [](void *arg, int status) {
        auto *c = static_cast<Counter *>(arg);
        c->done += 1;
        if (status) c->error = status;
    };
    tw_rma_request r{};
    r.size = sizeof r;
    r.op = read ? TW_RMA_OP_READ : TW_RMA_OP_WRITE;
    r.desc = desc.data();
    r.desc_len = static_cast<uint32_t>(desc.size());
    r.local = lent.data;
    r.len = size;
    r.cb = on_done;
    r.arg = &counter;
    uint64_t posted = 0;
    auto start = std::chrono::steady_clock::now();
    bool ok = env.run_until(
        [&] {
            while (posted < iterations && posted - counter.done < depth) {
                int prc = client.ops().rma_post(client.conn(), &r);
                if (prc == -EAGAIN) break;
                if (prc) {
                    counter.error = prc;
                    return true;
                }
                posted += 1;
            }
            return counter.error != 0 || counter.done == iterations;
        },
        std::chrono::minutes(10));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!ok || counter.error) {
        fprintf(stderr, "rma-bench-client: %s after %llu of %llu: %d %s\n", ok ? "failed" : "timed out",
                static_cast<unsigned long long>(counter.done), static_cast<unsigned long long>(iterations),
                counter.error, client.ops().last_error(client.conn()));
        return 1;
    }
    printf("mib_per_s %.2f\n", double(size) * double(iterations) / seconds / 1048576.0);
    client.ops().rma_mem_put(client.conn(), &lent);
    return 0;
}

} // namespace twinwire::rdmatest
