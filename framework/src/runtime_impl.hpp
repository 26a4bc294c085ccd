// SPDX-License-Identifier: MIT
// The runtime's internals, shared by runtime*.cpp.
#pragma once

#include <twinwire/runtime.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

struct event;

namespace twinwire {

/// The connections of one loop; `conns` is touched only on that loop's thread.
struct LoopState {
    std::unordered_map<uint64_t, std::weak_ptr<Connection>> conns;
    std::atomic<size_t> count{0};
};

struct ListenerImpl {
    struct Endpoint {
        ListenerImpl *owner;
        Transport *transport;
        tw_listener *listener;
    };
    Runtime::Impl *rt;
    std::string address;
    uint16_t port = 0;
    std::shared_ptr<AcceptHandler> on_accept;
    std::vector<std::unique_ptr<Endpoint>> endpoints;
    bool closed = false;

    static void on_incoming(tw_listener *listener, void *arg);
    void close_now(); ///< on loop 0's thread
};

struct Runtime::Impl {
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
    uint64_t stop_deadline_ns = 0;

    explicit Impl(Runtime *runtime) : rt(runtime) {}
    /// Loops in turn (separate turns for accepted and outgoing connections).
    Loop &next_loop(std::atomic<unsigned> &turn);
    /// Track a connection on `loop` (its thread) until it ends.
    void track(Loop &loop, const ConnectionPtr &c);
    /// A connection accepted by a listener, now on its own loop's thread.
    void adopt_accepted(Loop &loop, Transport &transport, tw_conn *conn, std::shared_ptr<AcceptHandler> handler);
    /// Start a connect on `loop`'s thread over route step `step` (after a
    /// failure, the next step is tried with the reason kept).
    void start_connect(Loop &loop, const ConnectOptions &options, ConnectHandler done, size_t step,
                       std::string fallback_reason);
    void begin_stop(bool drain); ///< on loop 0
    void close_connections(size_t loop_index, bool drain);
    void teardown_loop(size_t loop_index); ///< on the loop's thread, after run() returned
    void close_listeners();
};

} // namespace twinwire
