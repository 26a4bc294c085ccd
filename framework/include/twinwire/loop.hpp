// SPDX-License-Identifier: MIT
// One libevent event loop per thread, and the timers that run on it.
#pragma once

#include <twinwire/export.hpp>

#include <twinwire/transport.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

struct event_base;
struct event;

namespace twinwire {

class Transport;
struct LoopImpl;

/**
 * An event loop: a libevent event_base driven by one thread, plus the
 * tw_loop handle that transports see through the host services.
 *
 * Each iteration: run posted tasks and due timers, ask every attached
 * transport whether it holds pending data (has_pending_data) and let it
 * deliver that (process_pending_data), then wait for fds - without sleeping
 * while any transport still has pending data.
 */
class TW_API Loop {
public:
    explicit Loop(unsigned index = 0);
    ~Loop();
    Loop(const Loop &) = delete;
    Loop &operator=(const Loop &) = delete;

    unsigned index() const;
    event_base *base() const;
    /// The handle handed to transports (tw_host functions take it).
    tw_loop *handle() const;
    static Loop *from_handle(tw_loop *loop);

    /// Make the calling thread the loop's owner (the constructing thread
    /// owns it until then).  run() and run_once() claim it too.
    void bind_to_current_thread();
    /// Run until stop(), on the thread that owns the loop.
    void run();
    /// Run iterations until `done()` is true or `timeout` passes; returns
    /// done().  For tests and tools that drive a loop by hand.
    bool run_until(const std::function<bool()> &done, std::chrono::milliseconds timeout);
    /// Run one iteration, sleeping at most `max_wait`.
    void run_once(std::chrono::milliseconds max_wait);
    /// Ask run() to return after the current iteration.  Any thread.
    void stop();
    bool stopping() const;

    /// Run `fn` on the loop's thread at the next iteration, never inline.
    /// Any thread.  Tasks run in the order posted.  Returns false when the
    /// loop has been shut down (fn is dropped).
    bool post(std::function<void()> fn);
    bool in_loop_thread() const;

    /// Run the tasks still queued, then refuse new ones (post() returns
    /// false).  Called on the loop's thread when it is being torn down.
    void shutdown();

    /// Called by the framework when a transport attaches to / detaches
    /// from this loop, so the loop asks it for pending data.
    void add_pending_source(const tw_transport_ops *ops, tw_transport_loop *tloop);
    void remove_pending_source(tw_transport_loop *tloop);

private:
    friend struct LoopImpl;
    std::unique_ptr<LoopImpl> impl_;
};

/// A timer on one loop.  Its callback runs on that loop's thread.  The Timer
/// must be used and destroyed on that thread; destroying it cancels it.
class TW_API Timer {
public:
    Timer(Loop &loop, std::function<void()> callback);
    ~Timer();
    Timer(const Timer &) = delete;
    Timer &operator=(const Timer &) = delete;

    /// First expiry after `delay`, then every `period` (zero = one-shot).
    void start(std::chrono::nanoseconds delay, std::chrono::nanoseconds period = std::chrono::nanoseconds(0));
    void stop();
    bool active() const;

private:
    /// Its libevent timer, callback and period (framework/src/loop.cpp).
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// CLOCK_MONOTONIC in nanoseconds.
TW_API uint64_t monotonic_ns();

} // namespace twinwire
