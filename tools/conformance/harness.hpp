// SPDX-License-Identifier: MIT
// A small host for the conformance cases: real loops (one driven by the
// test thread, others on their own threads), endpoints that record every
// callback and check the event rules of transport.h, and servers that
// accept onto any loop.
#pragma once

#include "addresses.hpp"
#include "context.hpp"

#include <twinwire/loop.hpp>
#include <twinwire/transport.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace twinwire::conformance {

/// How long a case waits for something that should happen: 60 s unless
/// set (twinwire-conformance --wait-ms), times 4 in a TSan build and 2 in an
/// ASan one.  Generous: the RDMA suite runs in an emulated guest.  Never a
/// timing assertion.
std::chrono::milliseconds wait_limit();
void set_wait_limit(std::chrono::milliseconds limit);

/// Marks the calling thread as inside a transport operation, so that a
/// callback arriving meanwhile is caught as re-entrant (rule 2).
class OpGuard {
public:
    OpGuard();
    ~OpGuard();
    static bool active();
};

/**
 * One connection as a host sees it.  Every callback is recorded and checked
 * against the event rules; by default the endpoint reads everything into
 * `received` and writes out what send() queued, asking for TW_EV_WRITE
 * only while something waits.  Use it on its loop's thread only.
 */
class Endpoint {
public:
    Endpoint(const tw_transport_ops &ops, tw_conn *conn, std::string label);
    ~Endpoint();
    Endpoint(const Endpoint &) = delete;
    Endpoint &operator=(const Endpoint &) = delete;

    // The vtable, called as the host would (inside an OpGuard).
    int attach();
    ssize_t read(void *buf, size_t len);
    ssize_t write(const void *buf, size_t len);
    int set_events(uint32_t events);
    int shutdown(int how);
    void close();
    tw_conn_stats stats();
    sockaddr_storage local_address();
    sockaddr_storage peer_address();
    tw_conn *conn() const { return conn_; }
    const tw_transport_ops &ops() const { return ops_; }
    const std::string &label() const { return label_; }

    // Behaviour, set before attach() or from a callback.
    bool auto_read = true;       ///< read on TW_EV_READ
    bool echo = false;           ///< send back what arrives, and end-of-stream after it
    bool manage_interest = true; ///< choose READ/WRITE interest automatically
    size_t read_chunk = 64 * 1024;
    size_t reads_per_event = SIZE_MAX;      ///< 1 makes a slow reader
    size_t backlog_limit = size_t(4) << 20; ///< an echo stops reading while this much waits to go out
    /// Runs first on every callback; return false to skip the default handling
    /// (and return false after closing the endpoint).
    std::function<bool(Endpoint &, uint32_t events)> on_event;
    /// Runs after new bytes were appended to `received`.
    std::function<void(Endpoint &)> on_received;

    /// Queue bytes and write what the transport takes now.
    void send(std::string_view data);
    /// Send end-of-stream once everything queued is written.
    void shutdown_after_flush();
    void pause_reading();
    void resume_reading();
    size_t queued() const { return outbox_.size() - out_off_; }

    // What happened.
    std::string received;
    bool eof = false;
    int read_error = 0;
    int write_error = 0;
    uint64_t callbacks = 0;
    uint64_t connected = 0;
    uint64_t errors = 0;
    uint64_t eagain_writes = 0;
    uint64_t short_writes = 0;
    int error_code = 0;     ///< get_error() when TW_EV_ERROR came
    std::string last_error; ///< last_error() when TW_EV_ERROR came
    bool closed = false;
    bool failed() const { return errors > 0 || read_error < 0 || write_error < 0; }

    /// One line of state for failure messages.
    std::string describe() const;
    /// The event rules this endpoint saw broken, "" when none.
    std::string rule_violations() const;

    void update_interest();
    void pump_read();
    void pump_write();

private:
    static void on_callback(tw_conn *conn, uint32_t events, void *arg);
    void handle(uint32_t events);

    const tw_transport_ops &ops_;
    tw_conn *conn_;
    std::string label_;
    std::string outbox_;
    size_t out_off_ = 0;
    std::vector<char> scratch_;
    uint32_t interest_ = TW_EV_READ;
    bool reading_ = true;
    bool shut_after_flush_ = false;
    uint64_t reentrant_ = 0;
    uint64_t after_close_ = 0;
    uint64_t before_connected_ = 0;
    uint64_t zero_writes_ = 0;
};

class Env;

/// A listener on one loop that accepts onto `target` (possibly another
/// loop) and gives every connection an Endpoint there.
class Server {
public:
    Server(Env &env, unsigned loop, unsigned target, const sockaddr_storage &addr, uint32_t flags);
    ~Server();
    /// Stop listening (on the listener's loop thread).
    void close();

    sockaddr_storage address{}; ///< the bound address, port filled in
    bool echo = true;           ///< accepted endpoints echo
    bool hold = false;          ///< leave accepted endpoints without set_callback (see release_held)
    /// Configure each accepted endpoint on the target loop, before set_callback.
    std::function<void(Endpoint &)> configure;
    std::atomic<size_t> accepted{0};
    std::atomic<int> accept_error{0};
    /// Accepted endpoints, touched on the target loop's thread only.
    std::vector<Endpoint *> endpoints;
    std::vector<Endpoint *> held;
    /// Call set_callback for the held endpoints (target loop thread).
    void release_held();

private:
    static void on_incoming(tw_listener *listener, void *arg);
    void hand_over(tw_conn *conn);

    Env &env_;
    unsigned target_;
    tw_listener *listener_ = nullptr;
    /// False once the Server is gone: a hand-over still posted then only closes.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

/**
 * The loops and objects of one case.  Loop 0 belongs to the test thread and
 * runs only inside run_until()/spin(); loops 1.. run on their own threads.
 * Everything is closed on its own loop's thread when the Env goes away.
 */
class Env {
public:
    explicit Env(unsigned loops = 1);
    ~Env();
    Env(const Env &) = delete;
    Env &operator=(const Env &) = delete;

    Transport &transport() const { return transport_; }
    const tw_transport_ops &ops() const { return transport_.ops(); }
    uint64_t caps() const { return transport_.ops().caps; }
    Loop &loop(unsigned i = 0);
    tw_transport_loop *tloop(unsigned i = 0);

    /// Drive loop 0 until `done()` or `timeout`; returns done().
    bool run_until(const std::function<bool()> &done, std::chrono::milliseconds timeout = wait_limit());
    /// Drive loop 0 for a few iterations (lets pending work happen).
    void spin(int iterations = 20);
    /// Run `fn` on loop i's thread and wait for it to finish.
    void on_loop(unsigned i, const std::function<void()> &fn);

    /// Listen on the context's server address (or `addr`) on loop `loop`,
    /// accepting onto loop `target`.  Throws when listen fails.
    Server &listen(unsigned loop = 0, unsigned target = 0, std::optional<sockaddr_storage> addr = std::nullopt,
                   uint32_t flags = 0);
    /// Start a connection from loop 0 (binding the context's client source
    /// address, if any, unless `bind_source` is false: then the route picks
    /// it).  Returns the op's result and, on success, *out.
    int try_connect(const sockaddr_storage &to, uint32_t timeout_ms, Endpoint **out, bool bind_source = true);
    /// Like try_connect, throwing when the op fails.
    Endpoint &connect(const sockaddr_storage &to, uint32_t timeout_ms = 0);
    Endpoint &connect(const Server &server) { return connect(server.address); }
    /// Connect to `server` (which accepts onto loop 0) and wait until both
    /// ends reported TW_EV_CONNECTED.  Returns the client; the accepted end
    /// is server.endpoints.back().  Throws when that does not happen.
    Endpoint &connect_both(Server &server);
    /// An address of the context's server host where nothing listens.
    sockaddr_storage unused_address();
    /// Give `conn` an endpoint owned by this Env, on loop i.
    Endpoint &adopt(unsigned i, tw_conn *conn, std::string label);

    /// Every endpoint's broken rules ("" when none).  Call on the test
    /// thread when loops 1.. are idle (or from on_loop for their endpoints).
    std::string rule_violations();

private:
    struct Slot;
    void stop_slot(Slot &slot, unsigned index);
    Transport &transport_;
    std::vector<std::unique_ptr<Slot>> slots_;
};

/// Borrow the next received bytes of `e` (recv_buf_borrow), driving loop 0
/// while none are there.  Returns what the last borrow returned.
int borrow(Env &env, Endpoint &e, tw_buf *buf);

} // namespace twinwire::conformance
