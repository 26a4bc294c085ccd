// SPDX-License-Identifier: MIT
// One-sided remote memory (ABI 1.3) over real verbs: every access goes
// through the plugin's C vtable (rma_expose / rma_post / rma_revoke), and
// every refusal is the device's: type-2 windows bound to one QP over
// exactly the exposed range.  Descriptors reach the peer on the stream,
// as applications send them (a window is bound before what follows
// rma_expose on its connection, not sooner).  Forged descriptors (the format is in
// docs/rdma-design.md, "One-sided remote memory") bypass the initiator's
// local checks so that the window is what refuses.
#include "rdma_test.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

namespace {

struct Done {
    bool done = false;
    int status = 1;
    int calls = 0;
};

void on_done(void *arg, int status)
{
    auto *d = static_cast<Done *>(arg);
    d->done = true;
    d->status = status;
    d->calls += 1;
}

struct Exposed {
    tw_rma_exposure *exposure = nullptr;
    std::vector<uint8_t> desc;
};

/// Expose on `e` and hand the descriptor to `peer` as applications do: on
/// the stream, behind the window's bind (an exposure made while remote
/// operations are in flight is bound only once they completed, and the
/// descriptor a peer acts on must come after it).  The peer uses the bytes
/// it received.
Exposed expose(Env &env, Endpoint &e, Endpoint &peer, void *addr, size_t len, uint32_t access)
{
    Exposed x;
    uint8_t desc[TW_RMA_DESC_MAX];
    size_t desc_len = 0;
    int rc = e.ops().rma_expose(e.conn(), addr, len, access, &x.exposure, desc, &desc_len);
    INFO("rma_expose: " << rc << " " << e.ops().last_error(e.conn()));
    REQUIRE(rc == 0);
    REQUIRE(desc_len > 0);
    REQUIRE(desc_len <= TW_RMA_DESC_MAX);
    size_t at = peer.received.size();
    e.send(std::string_view(reinterpret_cast<const char *>(desc), desc_len));
    REQUIRE(env.run_until([&] { return peer.received.size() >= at + desc_len || peer.failed() || e.failed(); }));
    REQUIRE(peer.received.compare(at, desc_len, reinterpret_cast<const char *>(desc), desc_len) == 0);
    x.desc.assign(peer.received.begin() + at, peer.received.begin() + at + desc_len);
    return x;
}

// The descriptor's fields (little endian): magic 0, version 4, access 5,
// address 8, length 16, rkey 24.
uint64_t field(const std::vector<uint8_t> &d, size_t at, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v |= uint64_t(d[at + i]) << (8 * i);
    return v;
}
void set_field(std::vector<uint8_t> &d, size_t at, size_t bytes, uint64_t v)
{
    for (size_t i = 0; i < bytes; ++i) d[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
constexpr size_t kAccess = 5, kAddr = 8, kLen = 16, kRkey = 24;

tw_rma_request request(uint32_t op, const std::vector<uint8_t> &desc, uint64_t offset, void *local, size_t len,
                       Done *done)
{
    tw_rma_request r{};
    r.size = sizeof r;
    r.op = op;
    r.desc = desc.data();
    r.desc_len = static_cast<uint32_t>(desc.size());
    r.offset = offset;
    r.local = local;
    r.len = len;
    r.cb = on_done;
    r.arg = done;
    return r;
}

/// Post (waiting out -EAGAIN) and drive loop 0 until the callback ran.
int transfer(Env &env, Endpoint &e, uint32_t op, const std::vector<uint8_t> &desc, uint64_t offset, void *local,
             size_t len)
{
    Done done;
    tw_rma_request r = request(op, desc, offset, local, len, &done);
    int rc = -EAGAIN;
    env.run_until([&] {
        rc = e.ops().rma_post(e.conn(), &r);
        return rc != -EAGAIN;
    });
    if (rc) return rc;
    REQUIRE(env.run_until([&] { return done.done; }, 120s));
    CHECK(done.calls == 1);
    return done.status;
}

void revoke(Env &env, Endpoint &e, Exposed &x)
{
    Done done;
    REQUIRE(e.ops().rma_revoke(x.exposure, on_done, &done) == 0);
    CHECK_FALSE(done.done); // never from inside the call
    REQUIRE(env.run_until([&] { return done.done; }));
    CHECK(done.status == 0);
}

std::string bytes(size_t n, uint32_t seed) { return make_payload(n, seed); }

/// A listener whose accepted ends keep what they receive (no echo).
Server &listen_quietly(Env &env)
{
    Server &s = env.listen();
    s.echo = false;
    return s;
}

/// Both ends on loop 0: the client and the accepted end.
struct Pair {
    Env env;
    Server &server;
    Endpoint &client;
    Endpoint &accepted;
    Pair() : server(listen_quietly(env)), client(env.connect_both(server)), accepted(*server.endpoints.back()) {}
};

/// The accepted end exposes; the client gets the descriptor on the stream.
Exposed expose(Pair &p, void *addr, size_t len, uint32_t access)
{
    return expose(p.env, p.accepted, p.client, addr, len, access);
}

} // namespace

TEST_CASE("RDMA READ and WRITE of 1 B to 64 MiB move exactly the bytes asked for, split to rdma.rma_max_transfer, "
          "from lent memory in place and from any other memory through staging",
          "[rdma][rma]")
{
    use_settings({{"rdma.rma_max_transfer", "1M"}});
    Pair p;
    REQUIRE((p.env.caps() & TW_CAP_RMA) != 0);
    const size_t max = size_t(64) << 20;
    std::vector<uint8_t> window(max + 2 * 4096, 0xee); // guard bytes either side
    uint8_t *exposed = window.data() + 4096;
    Exposed x = expose(p, exposed, max, TW_RMA_READ | TW_RMA_WRITE);
    tw_buf lent = TW_BUF_INIT;
    REQUIRE(p.client.ops().rma_mem_get(p.client.conn(), max, &lent) == 0);
    std::vector<uint8_t> plain(max);
    for (size_t n : {size_t(1), size_t(4095), size_t(65536), (size_t(1) << 20) + 3, size_t(9) << 20, max}) {
        for (bool in_lent : {true, false}) {
            if (!in_lent && n > (size_t(9) << 20)) continue; // staging is exercised enough below 9 MiB
            INFO("size " << n << (in_lent ? " from lent memory" : " through staging"));
            uint8_t *local = in_lent ? static_cast<uint8_t *>(lent.data) : plain.data();
            std::string src = bytes(n, static_cast<uint32_t>(n + in_lent));
            std::memcpy(local, src.data(), n);
            uint64_t offset = n < max ? 7 : 0;
            REQUIRE(transfer(p.env, p.client, TW_RMA_OP_WRITE, x.desc, offset, local, n) == 0);
            CHECK(std::memcmp(exposed + offset, src.data(), n) == 0);
            // Read back what the peer holds into a cleared buffer.
            std::memset(local, 0, n);
            REQUIRE(transfer(p.env, p.client, TW_RMA_OP_READ, x.desc, offset, local, n) == 0);
            CHECK(std::memcmp(local, src.data(), n) == 0);
        }
    }
    for (size_t i = 0; i < 4096; ++i) {
        REQUIRE(window[i] == 0xee);
        REQUIRE(window[4096 + max + i] == 0xee);
    }
    revoke(p.env, p.accepted, x);
    CHECK(p.client.ops().rma_mem_put(p.client.conn(), &lent) == 0);
    CHECK_FALSE(p.client.failed());
    CHECK(p.env.rule_violations() == "");
}

TEST_CASE("the initiator refuses out-of-bounds and wrong-mode requests before posting, and with those checks "
          "bypassed by a forged descriptor the device refuses them with -TW_EREMOTEACCESS, touching nothing",
          "[rdma][rma]")
{
    use_settings({});
    std::vector<uint8_t> memory(3 * 4096, 0x11);
    uint8_t *exposed = memory.data() + 4096;
    std::vector<uint8_t> local(8192, 0x77);
    {
        Pair p;
        Exposed x = expose(p, exposed, 4096, TW_RMA_READ);
        tw_rma_request r{};
        Done d;
        r = request(TW_RMA_OP_READ, x.desc, 4000, local.data(), 100, &d);
        CHECK(p.client.ops().rma_post(p.client.conn(), &r) == -EINVAL);
        r = request(TW_RMA_OP_WRITE, x.desc, 0, local.data(), 1, &d);
        CHECK(p.client.ops().rma_post(p.client.conn(), &r) == -TW_EREMOTEACCESS);
        CHECK(std::string(p.client.ops().last_error(p.client.conn())).find("writing") != std::string::npos);
        std::vector<uint8_t> garbage = x.desc;
        garbage[0] ^= 1;
        r = request(TW_RMA_OP_READ, garbage, 0, local.data(), 1, &d);
        CHECK(p.client.ops().rma_post(p.client.conn(), &r) == -EINVAL);
        r = request(TW_RMA_OP_READ, x.desc, 0, local.data(), 0, &d);
        CHECK(p.client.ops().rma_post(p.client.conn(), &r) == -EINVAL);
        p.env.spin();
        CHECK_FALSE(d.done);
        CHECK_FALSE(p.client.failed());
    }
    SECTION("past the end")
    {
        Pair p;
        Exposed x = expose(p, exposed, 4096, TW_RMA_READ | TW_RMA_WRITE);
        std::vector<uint8_t> forged = x.desc;
        set_field(forged, kLen, 8, 8192);
        CHECK(transfer(p.env, p.client, TW_RMA_OP_WRITE, forged, 4000, local.data(), 200) == -TW_EREMOTEACCESS);
        INFO(p.client.last_error);
        REQUIRE(p.env.run_until([&] { return p.client.errors > 0; }));
        CHECK(p.client.last_error.find("RDMA_WRITE (rma_post): remote access error") != std::string::npos);
        // The exposing end sees its connection end; revoke still releases
        // the exposure, with 0 and without a verb (rule 6).
        REQUIRE(p.env.run_until([&] { return p.accepted.errors > 0 || p.accepted.eof; }));
        revoke(p.env, p.accepted, x);
    }
    SECTION("before the start")
    {
        Pair p;
        Exposed x = expose(p, exposed, 4096, TW_RMA_READ | TW_RMA_WRITE);
        std::vector<uint8_t> forged = x.desc;
        set_field(forged, kAddr, 8, field(forged, kAddr, 8) - 64);
        CHECK(transfer(p.env, p.client, TW_RMA_OP_READ, forged, 0, local.data(), 128) == -TW_EREMOTEACCESS);
    }
    SECTION("a mode not exposed: a write to a read-only exposure, a read of a write-only one")
    {
        for (uint32_t exposed_for : {uint32_t(TW_RMA_READ), uint32_t(TW_RMA_WRITE)}) {
            Pair p;
            Exposed x = expose(p, exposed, 4096, exposed_for);
            std::vector<uint8_t> forged = x.desc;
            set_field(forged, kAccess, 1, TW_RMA_READ | TW_RMA_WRITE);
            uint32_t op = exposed_for == TW_RMA_READ ? TW_RMA_OP_WRITE : TW_RMA_OP_READ;
            CHECK(transfer(p.env, p.client, op, forged, 0, local.data(), 64) == -TW_EREMOTEACCESS);
            CHECK(local[0] == 0x77);
        }
    }
    for (uint8_t b : memory) REQUIRE(b == 0x11);
}

TEST_CASE("after rma_revoke's callback, and after the exposing side closed (even while it lingers), the old "
          "descriptor opens nothing",
          "[rdma][rma]")
{
    use_settings({});
    std::vector<uint8_t> memory(4096, 0x22);
    std::vector<uint8_t> local(4096, 0x99);
    SECTION("revoked")
    {
        Pair p;
        Exposed x = expose(p, memory.data(), memory.size(), TW_RMA_READ | TW_RMA_WRITE);
        REQUIRE(transfer(p.env, p.client, TW_RMA_OP_READ, x.desc, 0, local.data(), 16) == 0);
        CHECK(local[0] == 0x22);
        revoke(p.env, p.accepted, x);
        CHECK(transfer(p.env, p.client, TW_RMA_OP_WRITE, x.desc, 0, local.data(), 16) == -TW_EREMOTEACCESS);
    }
    SECTION("closed")
    {
        Pair p;
        Exposed x = expose(p, memory.data(), memory.size(), TW_RMA_READ | TW_RMA_WRITE);
        REQUIRE(transfer(p.env, p.client, TW_RMA_OP_READ, x.desc, 0, local.data(), 16) == 0);
        // A healthy close lingers for the peer's end of stream; the window
        // is gone already.
        p.accepted.close();
        CHECK(transfer(p.env, p.client, TW_RMA_OP_WRITE, x.desc, 0, local.data(), 16) == -TW_EREMOTEACCESS);
    }
    for (uint8_t b : memory) REQUIRE(b == 0x22);
}

TEST_CASE("a descriptor for one exposure reaches no other exposure's memory, with a forged address or a guessed key",
          "[rdma][rma]")
{
    use_settings({});
    std::vector<uint8_t> a(4096, 0xaa), b(4096, 0xbb);
    std::vector<uint8_t> local(4096, 0x55);
    SECTION("another exposure's address under this exposure's key")
    {
        Pair p;
        Exposed xa = expose(p, a.data(), a.size(), TW_RMA_READ | TW_RMA_WRITE);
        Exposed xb = expose(p, b.data(), b.size(), TW_RMA_READ);
        std::vector<uint8_t> forged = xa.desc;
        set_field(forged, kAddr, 8, field(xb.desc, kAddr, 8));
        CHECK(transfer(p.env, p.client, TW_RMA_OP_WRITE, forged, 0, local.data(), 64) == -TW_EREMOTEACCESS);
    }
    SECTION("the neighbouring key")
    {
        Pair p;
        Exposed xa = expose(p, a.data(), a.size(), TW_RMA_READ);
        Exposed xb = expose(p, b.data(), b.size(), TW_RMA_READ);
        std::vector<uint8_t> forged = xb.desc;
        set_field(forged, kRkey, 4, field(xb.desc, kRkey, 4) + 1);
        set_field(forged, kAccess, 1, TW_RMA_READ | TW_RMA_WRITE);
        CHECK(transfer(p.env, p.client, TW_RMA_OP_WRITE, forged, 0, local.data(), 64) == -TW_EREMOTEACCESS);
        (void)xa;
    }
    for (uint8_t v : a) REQUIRE(v == 0xaa);
    for (uint8_t v : b) REQUIRE(v == 0xbb);
}

TEST_CASE("a descriptor is refused on any connection but its own: the window is bound to one queue pair", "[rdma][rma]")
{
    use_settings({});
    Env env;
    Server &server = env.listen();
    Endpoint &first = env.connect_both(server);
    Endpoint &first_accepted = *server.endpoints.back();
    Endpoint &second = env.connect_both(server);
    std::vector<uint8_t> memory(4096, 0x33);
    std::vector<uint8_t> local(4096, 0x44);
    Exposed x = expose(env, first_accepted, first, memory.data(), memory.size(), TW_RMA_READ | TW_RMA_WRITE);
    CHECK(transfer(env, second, TW_RMA_OP_WRITE, x.desc, 0, local.data(), 64) == -TW_EREMOTEACCESS);
    for (uint8_t v : memory) REQUIRE(v == 0x33);
    // Its own connection still works.
    REQUIRE(transfer(env, first, TW_RMA_OP_WRITE, x.desc, 0, local.data(), 64) == 0);
    CHECK(memory[0] == 0x44);
}

TEST_CASE("RMA interleaves with the byte stream: a write's callback announces it on the stream and the peer finds "
          "the bytes in place, while the stream's own bytes arrive intact",
          "[rdma][rma]")
{
    use_settings({});
    Pair p;
    const size_t slot = 256 * 1024, slots = 16;
    std::vector<uint8_t> memory(slot * slots, 0);
    Exposed x = expose(p, memory.data(), memory.size(), TW_RMA_WRITE);
    tw_buf lent = TW_BUF_INIT;
    REQUIRE(p.client.ops().rma_mem_get(p.client.conn(), slot * slots, &lent) == 0);
    auto *src = static_cast<uint8_t *>(lent.data);
    std::string stream;
    std::vector<std::unique_ptr<Done>> dones;
    for (size_t i = 0; i < slots; ++i) {
        std::string s = bytes(slot, static_cast<uint32_t>(100 + i));
        std::memcpy(src + i * slot, s.data(), slot);
        dones.push_back(std::make_unique<Done>());
        tw_rma_request r = request(TW_RMA_OP_WRITE, x.desc, i * slot, src + i * slot, slot, dones.back().get());
        int rc = -EAGAIN;
        REQUIRE(p.env.run_until([&] { return (rc = p.client.ops().rma_post(p.client.conn(), &r)) != -EAGAIN; }));
        REQUIRE(rc == 0);
        std::string chunk = bytes(40000, static_cast<uint32_t>(900 + i));
        stream += chunk;
        p.client.send(chunk);
    }
    // Announce each write from its callback's completion, in order.
    size_t announced = 0;
    std::string expected_announcements;
    auto state = [&] {
        std::string s;
        for (auto &d : dones) s += d->done ? std::to_string(d->status) + " " : "- ";
        return s + "; received " + std::to_string(p.accepted.received.size()) + " of " + std::to_string(stream.size()) +
               "+; client " + p.client.describe();
    };
    bool all_there = p.env.run_until(
        [&] {
            while (announced < slots && dones[announced]->done) {
                REQUIRE(dones[announced]->status == 0);
                std::string line = "W" + std::to_string(announced) + "\n";
                p.client.send(line);
                expected_announcements += line;
                ++announced;
            }
            return announced == slots && p.accepted.received.size() == stream.size() + expected_announcements.size();
        },
        60s);
    if (!all_there) FAIL(state());
    CHECK(p.accepted.received.substr(0, stream.size()) == stream);
    CHECK(p.accepted.received.substr(stream.size()) == expected_announcements);
    CHECK(std::memcmp(memory.data(), src, memory.size()) == 0);
    CHECK_FALSE(p.client.failed());
}

namespace {

/// A window of operations that its callbacks keep full: each callback posts
/// the next operation from inside the plugin's delivery, READ and WRITE in
/// turn, on slots of 4 KiB in lent memory.
struct Refill {
    Endpoint *client = nullptr;
    const std::vector<uint8_t> *desc = nullptr;
    uint8_t *local = nullptr;
    size_t slot = 4096, slots = 0, total = 0, posted = 0, completed = 0;
    std::vector<int> calls;   // per operation
    std::vector<int> refused; // posts that returned neither 0 nor -EAGAIN
    std::vector<std::unique_ptr<std::pair<Refill *, size_t>>> args;

    bool post_next()
    {
        if (posted == total) return false;
        size_t i = posted;
        args.push_back(std::make_unique<std::pair<Refill *, size_t>>(this, i));
        tw_rma_request r{};
        r.size = sizeof r;
        r.op = i % 2 ? TW_RMA_OP_READ : TW_RMA_OP_WRITE;
        r.desc = desc->data();
        r.desc_len = static_cast<uint32_t>(desc->size());
        r.offset = (i % slots) * slot;
        r.local = local + (i % slots) * slot;
        r.len = slot;
        r.cb = [](void *arg, int status) {
            auto *a = static_cast<std::pair<Refill *, size_t> *>(arg);
            Refill &f = *a->first;
            f.calls[a->second] += 1;
            if (status) f.refused.push_back(status);
            f.completed += 1;
            f.post_next();
        };
        r.arg = args.back().get();
        int rc = client->ops().rma_post(client->conn(), &r);
        if (rc == -EAGAIN) {
            args.pop_back();
            return false;
        }
        if (rc) refused.push_back(rc);
        posted += 1;
        return true;
    }
};

} // namespace

TEST_CASE("a window of READs and WRITEs refilled from its own callbacks, deeper than the READ limit and the send "
          "queue, completes every operation once with its bytes (pieces are signalled selectively: the last of "
          "each burst must be)",
          "[rdma][rma]")
{
    // No keepalive during the case: nothing but the operations' own
    // signalled work requests completes them.
    use_settings({{"rdma.keepalive_ms", "120000"}, {"rdma.dead_peer_ms", "240000"}});
    Pair p;
    Refill f;
    f.slots = 48; // more than the default rdma.sq_depth / 4, less than the 64 open operations
    f.total = 2001;
    f.calls.assign(f.total, 0);
    std::vector<uint8_t> memory(f.slot * f.slots);
    for (size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<uint8_t>(i * 7 + 3);
    Exposed x = expose(p, memory.data(), memory.size(), TW_RMA_READ | TW_RMA_WRITE);
    tw_buf lent = TW_BUF_INIT;
    REQUIRE(p.client.ops().rma_mem_get(p.client.conn(), memory.size(), &lent) == 0);
    f.client = &p.client;
    f.desc = &x.desc;
    f.local = static_cast<uint8_t *>(lent.data);
    std::memcpy(f.local, memory.data(), memory.size()); // every WRITE puts back what a READ finds
    while (f.posted < f.slots && f.post_next()) {
    }
    REQUIRE(f.posted > 0);
    bool finished = p.env.run_until(
        [&] {
            while (f.posted < f.total && f.posted - f.completed < f.slots && f.post_next()) {
            }
            return f.completed == f.total || p.client.failed();
        },
        180s);
    INFO("completed " << f.completed << " of " << f.total << ", posted " << f.posted << "; client "
                      << p.client.describe());
    REQUIRE(finished);
    CHECK(f.refused.empty());
    size_t wrong = 0;
    for (int n : f.calls) wrong += n != 1;
    CHECK(wrong == 0);
    CHECK(std::memcmp(memory.data(), f.local, memory.size()) == 0);
    tw_conn_stats st{};
    st.size = sizeof st;
    REQUIRE(p.client.ops().get_stats(p.client.conn(), &st) == 0);
    // Not asserted (the device batches events as it likes), shown for a reader.
    INFO("client cq_events " << st.cq_events << " for " << f.total << " operations");
    // Then one operation at a time: each is a burst of its own, and only a
    // signalled last piece reports it. Unsignalled, it would wait for the
    // next signalled work request: here the keepalive, 120 s away, so 60 s
    // tells a missing signal from a slow guest.
    for (int i = 0; i < 5; ++i) {
        INFO("lone operation " << i);
        Done done;
        tw_rma_request r = request(i % 2 ? TW_RMA_OP_READ : TW_RMA_OP_WRITE, x.desc, 0, f.local, f.slot, &done);
        REQUIRE(p.client.ops().rma_post(p.client.conn(), &r) == 0);
        REQUIRE(p.env.run_until([&] { return done.done; }, 60s));
        CHECK(done.status == 0);
    }
    CHECK_FALSE(p.client.failed());
    CHECK(p.env.rule_violations() == "");
    revoke(p.env, p.accepted, x);
    CHECK(p.client.ops().rma_mem_put(p.client.conn(), &lent) == 0);
}

TEST_CASE("close with RDMA READs in flight returns and runs none of their callbacks afterwards; a forked child gets "
          "TW_EFORKED from rma_expose",
          "[rdma][rma]")
{
    use_settings({});
    Pair p;
    std::vector<uint8_t> memory(size_t(8) << 20, 0x10);
    Exposed x = expose(p, memory.data(), memory.size(), TW_RMA_READ | TW_RMA_WRITE);
    std::vector<uint8_t> target(4096, 0);
    pid_t pid = fork();
    if (pid == 0) {
        tw_rma_exposure *e = nullptr;
        uint8_t desc[TW_RMA_DESC_MAX];
        size_t len = 0;
        int rc =
            p.accepted.ops().rma_expose(p.accepted.conn(), target.data(), target.size(), TW_RMA_READ, &e, desc, &len);
        _exit(rc == -TW_EFORKED ? 0 : 1);
    }
    REQUIRE(pid > 0);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);

    std::vector<uint8_t> local(memory.size());
    std::vector<std::unique_ptr<Done>> dones;
    for (int i = 0; i < 4; ++i) {
        dones.push_back(std::make_unique<Done>());
        tw_rma_request r = request(TW_RMA_OP_READ, x.desc, 0, local.data(), local.size(), dones.back().get());
        int rc = p.client.ops().rma_post(p.client.conn(), &r);
        if (rc == -EAGAIN) break;
        REQUIRE(rc == 0);
    }
    p.client.close();
    p.env.spin(200);
    for (auto &d : dones) CHECK(d->calls == 0);
}

TEST_CASE("a peer killed with RMA in flight fails every operation, each callback once, with the connection's error "
          "or -TW_EREMOTEACCESS (its windows died with it)",
          "[rdma][rma][liveness]")
{
    use_settings({});
    std::string line;
    sockaddr_storage addr = context().server_address();
    pid_t child = start_child({"rma-expose", host_text(addr)}, &line);
    REQUIRE(child > 0);
    uint16_t port = static_cast<uint16_t>(std::atoi(line.c_str()));
    REQUIRE(port != 0);
    set_port(addr, port);
    Env env;
    Endpoint &client = env.connect(addr, 30000);
    REQUIRE(env.run_until([&] { return client.received.size() >= 28 || client.failed(); }, 60s));
    REQUIRE_FALSE(client.failed());
    std::vector<uint8_t> desc(client.received.begin(), client.received.end());
    tw_buf lent = TW_BUF_INIT;
    REQUIRE(client.ops().rma_mem_get(client.conn(), size_t(16) << 20, &lent) == 0);
    std::vector<std::unique_ptr<Done>> dones;
    for (int i = 0; i < 8; ++i) {
        dones.push_back(std::make_unique<Done>());
        tw_rma_request r = request(i % 2 ? TW_RMA_OP_WRITE : TW_RMA_OP_READ, desc, uint64_t(i) << 20, lent.data,
                                   size_t(16) << 20, dones.back().get());
        int rc = client.ops().rma_post(client.conn(), &r);
        if (rc == -EAGAIN) {
            dones.pop_back();
            break;
        }
        REQUIRE(rc == 0);
    }
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(env.run_until(
        [&] {
            for (auto &d : dones)
                if (!d->done) return false;
            return client.errors > 0;
        },
        300s));
    size_t failed = 0;
    for (auto &d : dones) {
        CHECK(d->calls == 1);
        if (d->status != 0) {
            failed += 1;
            // An access that reached the peer after its windows died with
            // its process is refused by the device.
            CHECK((d->status == client.error_code || d->status == -TW_EREMOTEACCESS));
        }
    }
    INFO(client.last_error);
    CHECK(failed > 0);
    CHECK(client.ops().rma_mem_put(client.conn(), &lent) == 0);
}
