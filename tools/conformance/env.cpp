// SPDX-License-Identifier: MIT
// Env and Server: the loops of one case, its listeners and connections.
#include "harness.hpp"
#include "needs.hpp"
#include "../../tests/sanitizer_stretch.hpp"

#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace twinwire::conformance {
namespace {

std::atomic<long long> g_wait_ms{60000};

/// Ports for transports without listener_addr: spread by pid so that
/// parallel runs rarely meet, then counting up.
uint16_t next_free_port_guess()
{
    static std::atomic<unsigned> next{static_cast<unsigned>(getpid()) * 7u};
    return static_cast<uint16_t>(20000 + next++ % 30000);
}

} // namespace

// The wait bounds hangs and is no timing assertion: it stretches with a sanitized build.
std::chrono::milliseconds wait_limit()
{
    return std::chrono::milliseconds(g_wait_ms.load() * twinwire::test::sanitizer_stretch());
}
void set_wait_limit(std::chrono::milliseconds limit) { g_wait_ms = limit.count(); }

/// One loop with everything that lives on it.  Loop 0 is owned by the test
/// thread; the others are created, run and destroyed by their own thread.
struct Env::Slot {
    std::unique_ptr<Loop> own_loop; // loop 0
    Loop *loop = nullptr;
    std::thread thread;
    // The thread keeps its loop until stop() has returned here: stop()
    // writes to the loop's wake-up fd, which the loop's destructor closes.
    std::promise<void> release;
    tw_transport_loop *tloop = nullptr;
    std::vector<std::unique_ptr<Endpoint>> endpoints;
    std::vector<std::unique_ptr<Server>> servers;
};

Env::Env(unsigned loops) : transport_(conformance::transport())
{
    for (unsigned i = 0; i < loops; i++) {
        auto slot = std::make_unique<Slot>();
        if (i == 0) {
            slot->own_loop = std::make_unique<Loop>(0);
            slot->loop = slot->own_loop.get();
            slot->tloop = transport_.attach(*slot->loop);
        } else {
            std::promise<Loop *> started;
            std::future<void> released = slot->release.get_future();
            slot->thread = std::thread([i, &started, released = std::move(released)] {
                Loop loop(i);
                loop.bind_to_current_thread();
                started.set_value(&loop);
                loop.run();
                released.wait();
            });
            slot->loop = started.get_future().get();
        }
        slots_.push_back(std::move(slot));
        if (i > 0) {
            Slot &s = *slots_.back();
            on_loop(i, [this, &s] { s.tloop = transport_.attach(*s.loop); });
        }
    }
}

Env::~Env()
{
    // A case's callbacks capture its locals by reference, and those (declared
    // after the Env) are gone by now: what closing delivers, and connections
    // still being handed over, get the default handling only.
    for (unsigned i = 0; i < slots_.size(); i++) {
        Slot &slot = *slots_[i];
        on_loop(i, [&slot] {
            for (auto &s : slot.servers) s->configure = nullptr;
            for (auto &e : slot.endpoints) {
                e->on_event = nullptr;
                e->on_received = nullptr;
            }
        });
    }
    for (unsigned i = static_cast<unsigned>(slots_.size()); i-- > 0;) stop_slot(*slots_[i], i);
}

void Env::stop_slot(Slot &slot, unsigned index)
{
    auto teardown = [this, &slot] {
        slot.servers.clear();
        slot.endpoints.clear();
        if (slot.tloop) transport_.detach(*slot.loop);
        slot.tloop = nullptr;
    };
    if (index == 0) {
        // Run what is still posted here first (set_callback of accepted
        // connections, the transport's own tasks): tasks run in order, so
        // once a marker posted now has run, those have too, and every
        // accepted connection has an Endpoint that closes it.
        bool drained = false;
        if (slot.loop->post([&drained] { drained = true; }))
            slot.loop->run_until([&drained] { return drained; }, wait_limit());
        teardown();
        return;
    }
    on_loop(index, teardown);
    slot.loop->stop();
    slot.release.set_value();
    slot.thread.join();
}

Loop &Env::loop(unsigned i) { return *slots_.at(i)->loop; }
tw_transport_loop *Env::tloop(unsigned i) { return slots_.at(i)->tloop; }

bool Env::run_until(const std::function<bool()> &done, std::chrono::milliseconds timeout)
{
    return loop(0).run_until(done, timeout);
}

void Env::spin(int iterations)
{
    for (int i = 0; i < iterations; i++) loop(0).run_once(std::chrono::milliseconds(1));
}

void Env::on_loop(unsigned i, const std::function<void()> &fn)
{
    if (i == 0) {
        fn();
        return;
    }
    std::promise<void> done;
    std::exception_ptr error;
    bool posted = loop(i).post([&] {
        try {
            fn();
        } catch (...) {
            error = std::current_exception();
        }
        done.set_value();
    });
    if (!posted) throw std::runtime_error("loop " + std::to_string(i) + " refused a task");
    done.get_future().wait();
    if (error) std::rethrow_exception(error);
}

Endpoint &Env::adopt(unsigned i, tw_conn *conn, std::string label)
{
    Slot &slot = *slots_.at(i);
    slot.endpoints.push_back(std::make_unique<Endpoint>(ops(), conn, std::move(label)));
    return *slot.endpoints.back();
}

Server &Env::listen(unsigned loop_index, unsigned target, std::optional<sockaddr_storage> addr, uint32_t flags)
{
    sockaddr_storage where = addr ? *addr : context().server_address();
    Server *server = nullptr;
    on_loop(loop_index, [&] {
        auto s = std::make_unique<Server>(*this, loop_index, target, where, flags);
        server = s.get();
        slots_.at(loop_index)->servers.push_back(std::move(s));
    });
    return *server;
}

int Env::try_connect(const sockaddr_storage &to, uint32_t timeout_ms, Endpoint **out, bool bind_source)
{
    std::optional<sockaddr_storage> source = bind_source ? context().client_source() : std::nullopt;
    tw_connect_params p{};
    p.size = sizeof p;
    p.timeout_ms = timeout_ms;
    p.addr = as_sockaddr(to);
    p.addrlen = address_length(to);
    if (source && source->ss_family == to.ss_family) {
        p.source = as_sockaddr(*source);
        p.sourcelen = address_length(*source);
    }
    tw_conn *conn = nullptr;
    int rc;
    {
        OpGuard guard;
        rc = ops().connect(tloop(0), &p, &conn);
    }
    if (rc < 0) return rc;
    Endpoint &e = adopt(0, conn, "client");
    if (int cb = e.attach(); cb < 0) throw std::runtime_error("set_callback failed: " + std::to_string(cb));
    *out = &e;
    return 0;
}

Endpoint &Env::connect(const sockaddr_storage &to, uint32_t timeout_ms)
{
    Endpoint *e = nullptr;
    if (int rc = try_connect(to, timeout_ms, &e); rc < 0)
        throw std::runtime_error("connect to " + to_text(to) + " failed at once: " + transport_.error_text(rc));
    return *e;
}

Endpoint &Env::connect_both(Server &server)
{
    size_t before = server.endpoints.size();
    Endpoint &client = connect(server);
    bool up = run_until([&] {
        return client.failed() ||
               (client.connected && server.endpoints.size() > before && server.endpoints.back()->connected);
    });
    if (!up || client.failed()) throw std::runtime_error("connection did not come up: " + client.describe());
    return client;
}

sockaddr_storage Env::unused_address()
{
    Server &server = listen();
    sockaddr_storage addr = server.address;
    server.close();
    return addr;
}

std::string Env::rule_violations()
{
    std::string out;
    for (unsigned i = 0; i < slots_.size(); i++)
        on_loop(i, [&] {
            for (auto &e : slots_[i]->endpoints) out += e->rule_violations();
        });
    return out;
}

Server::Server(Env &env, unsigned loop, unsigned target, const sockaddr_storage &addr, uint32_t flags)
    : env_(env), target_(target)
{
    tw_listen_params p{};
    p.size = sizeof p;
    p.addr = as_sockaddr(addr);
    p.addrlen = address_length(addr);
    p.flags = flags;
    p.on_incoming = on_incoming;
    p.arg = this;
    const tw_transport_ops &ops = env.ops();
    OpGuard guard;
    // Without listener_addr the bound port of "port 0" cannot be learnt:
    // choose the ports here instead, trying the next while one is in use.
    const bool tells_port = TW_NEED_OP(listener_addr).met;
    sockaddr_storage where = addr;
    int rc;
    for (int attempt = 0;; attempt++) {
        if (!tells_port && port_of(addr) == 0) set_port(where, next_free_port_guess());
        p.addr = as_sockaddr(where);
        rc = ops.listen(env.tloop(loop), &p, &listener_);
        if (rc != -EADDRINUSE || tells_port || port_of(addr) != 0 || attempt == 100) break;
    }
    if (rc < 0) throw std::runtime_error("listen on " + to_text(where) + " failed: " + env.transport().error_text(rc));
    if (!tells_port) {
        address = where;
        return;
    }
    uint32_t len = sizeof address;
    if (rc = ops.listener_addr(listener_, reinterpret_cast<sockaddr *>(&address), &len); rc < 0)
        throw std::runtime_error("listener_addr failed: " + env.transport().error_text(rc));
}

Server::~Server()
{
    *alive_ = false;
    close();
}

void Server::close()
{
    if (!listener_) return;
    OpGuard guard;
    env_.ops().listener_close(listener_);
    listener_ = nullptr;
}

void Server::on_incoming(tw_listener *, void *arg)
{
    auto *self = static_cast<Server *>(arg);
    for (;;) {
        tw_conn *conn = nullptr;
        int rc;
        {
            OpGuard guard;
            rc = self->env_.ops().accept(self->listener_, self->env_.tloop(self->target_), &conn);
        }
        if (rc == -EAGAIN) return;
        if (rc < 0) {
            self->accept_error = rc;
            return;
        }
        self->accepted++;
        // Posted even when the target is this loop, as the runtime does:
        // tasks the transport posted in accept() run before set_callback.
        // A Server on another loop may be gone when the task runs (the Env
        // stops loops one by one): then the connection is only closed.
        const tw_transport_ops *ops = &self->env_.ops();
        auto hand_over = [self, conn, ops, alive = self->alive_] {
            if (*alive) {
                self->hand_over(conn);
                return;
            }
            OpGuard guard;
            ops->close(conn);
        };
        if (!self->env_.loop(self->target_).post(hand_over)) {
            OpGuard guard;
            self->env_.ops().close(conn);
            self->accept_error = -ESHUTDOWN;
            return;
        }
    }
}

void Server::hand_over(tw_conn *conn)
{
    // Owned by the Env from here, so it is closed on its own loop's thread.
    Endpoint &e = env_.adopt(target_, conn, "server");
    e.echo = echo;
    if (configure) configure(e);
    if (hold) {
        held.push_back(&e);
        return;
    }
    e.attach();
    endpoints.push_back(&e);
}

int borrow(Env &env, Endpoint &e, tw_buf *buf)
{
    int rc = -EAGAIN;
    env.run_until([&] {
        OpGuard guard;
        rc = e.ops().recv_buf_borrow(e.conn(), buf);
        return rc != -EAGAIN;
    });
    return rc;
}

void Server::release_held()
{
    hold = false;
    for (Endpoint *e : held) {
        e->attach();
        endpoints.push_back(e);
    }
    held.clear();
}

} // namespace twinwire::conformance
