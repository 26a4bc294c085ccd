// SPDX-License-Identifier: MIT
// The runtime's internals, shared by runtime*.cpp.
#pragma once

#include "socket_activation.hpp"
#include "status_socket.hpp"

#include <twinwire/runtime.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

struct event;

namespace twinwire {

class Resolver;
struct ConnectAttempt;

/// The connections of one loop; `conns` is touched only on that loop's thread.
struct LoopState {
    std::unordered_map<uint64_t, std::weak_ptr<Connection>> conns;
    std::atomic<size_t> count{0};
    std::unique_ptr<Resolver> resolver; ///< created on first use, on the loop's thread
    ~LoopState();
};

struct ListenerImpl {
    struct Endpoint {
        ListenerImpl *owner;
        Transport *transport;
        tw_listener *listener;
        uint16_t port; ///< bound (0 for a Unix socket)
    };
    Runtime::Impl *rt;
    std::string address;
    uint16_t port = 0;
    std::string announced; ///< "address:port over names" once the log said "listening on" it
    std::shared_ptr<AcceptHandler> on_accept;
    std::vector<std::unique_ptr<Endpoint>> endpoints;
    std::atomic<bool> closed{false}; ///< set on loop 0; Runtime::status reads it from any thread

    static void on_incoming(tw_listener *listener, void *arg);
    void close_now(); ///< on loop 0's thread
};

// Hidden: none of it is exported, though Runtime is.
struct __attribute__((visibility("hidden"))) Runtime::Impl {
    // First, so they are destroyed last: the loops outlive the timers and
    // connections below, the transports outlive the loops.
    Config config;
    TransportSelection selection;
    std::vector<std::unique_ptr<Loop>> loops;

    Runtime *rt;
    std::vector<std::unique_ptr<LoopState>> states;
    std::vector<std::thread> workers;
    std::atomic<uint64_t> next_id{1};
    std::atomic<unsigned> accept_round_robin{0};
    std::atomic<unsigned> connect_round_robin{0};
    std::mutex listeners_mutex;
    std::vector<std::weak_ptr<ListenerImpl>> listeners;
    std::vector<struct event *> signal_events;
    std::vector<std::unique_ptr<std::function<void()>>> signal_handlers;
    std::atomic<bool> started{false};
    std::atomic<bool> stopping{false};
    std::atomic<bool> torn_down{false};
    std::unique_ptr<Timer> stop_timer;
    std::vector<PassedSocket> passed; ///< socket activation (loop 0's thread)
    uint64_t stop_deadline_ns = 0;
    /// Open connections per transport name, one entry per loaded transport
    /// made at start() (the map itself never changes afterwards).
    std::unordered_map<std::string, std::atomic<size_t>> open_by_transport;
    std::unique_ptr<StatusSocket> status_socket; ///< status_socket = PATH (loop 0)

    Impl(Runtime *runtime, Config settings) : config(std::move(settings)), rt(runtime) {}
    /// Loops in turn (separate turns for accepted and outgoing connections).
    Loop &next_loop(std::atomic<unsigned> &turn);
    /// Track a connection on `loop` (its thread) until it ends.
    void track(Loop &loop, const ConnectionPtr &c);
    /// A connection accepted by a listener, now on its own loop's thread.
    void adopt_accepted(Loop &loop, Transport &transport, tw_conn *conn, std::shared_ptr<AcceptHandler> handler);
    /// Start a connect on `loop`'s thread: resolve, then try_connect.
    void start_connect(Loop &loop, const ConnectOptions &options, ConnectHandler done);
    /// Try the attempt's current address over its current transport (past
    /// the last address: the next transport, or the end).
    void try_connect(const std::shared_ptr<ConnectAttempt> &a);
    void connect_failed(const std::shared_ptr<ConnectAttempt> &a, std::error_code code, const std::string &why);
    Resolver &resolver(Loop &loop); ///< on that loop's thread
    void begin_stop(bool drain);    ///< on loop 0
    void close_connections(size_t loop_index, bool drain);
    void teardown_loop(size_t loop_index); ///< on the loop's thread, after run() returned
    void close_listeners();
    /// A passed socket not yet taken (named so, or any); nullptr when none
    /// is left; StartupError when `name` is not among them.
    PassedSocket *take_passed_socket(const std::string &name);
    /// What the status socket answers: Runtime::status as lines.
    std::string status_text() const;
};

} // namespace twinwire
