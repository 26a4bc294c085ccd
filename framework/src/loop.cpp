// SPDX-License-Identifier: MIT
#include "host_objects.hpp"
#include "run_guarded.hpp"

#include <twinwire/log.hpp>
#include <twinwire/loop.hpp>
#include <twinwire/transport.h>

#include <event2/event.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>

namespace twinwire {

uint64_t monotonic_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct PendingSource {
    const tw_transport_ops *ops;
    tw_transport_loop *tloop;
};

struct LoopImpl {
    Loop *self;
    unsigned index;
    event_base *base = nullptr;
    tw_loop handle{};
    std::atomic<bool> stop{false};
    std::atomic<std::thread::id> owner;

    // Tasks posted from any thread; an eventfd wakes the loop for them.
    std::mutex mutex;
    std::vector<std::function<void()>> tasks;
    bool closed = false;
    int wake_fd = -1;
    event *wake_ev = nullptr;
    event *wait_limit_ev = nullptr; // bounds the sleep of run_once()
    uint64_t wait_limit_at_ns = 0;  // when wait_limit_ev fires; 0: not armed

    std::vector<PendingSource> sources;

    void wake()
    {
        uint64_t one = 1;
        ssize_t n = ::write(wake_fd, &one, sizeof one);
        (void)n; // EAGAIN means the counter is already non-zero: awake anyway
    }

    void run_tasks()
    {
        uint64_t count;
        ssize_t n = ::read(wake_fd, &count, sizeof count);
        (void)n;
        std::vector<std::function<void()>> batch;
        {
            std::lock_guard<std::mutex> lock(mutex);
            batch.swap(tasks);
        }
        for (auto &task : batch) run_guarded("posted task", index, task);
    }

    static void on_wake(evutil_socket_t, short, void *arg) { static_cast<LoopImpl *>(arg)->run_tasks(); }
    static void on_wait_limit(evutil_socket_t, short, void *arg) { static_cast<LoopImpl *>(arg)->wait_limit_at_ns = 0; }

    // A limit already armed to fire within `max_wait_ms` stays: waking
    // sooner only ends a turn early, and run_until() would otherwise add
    // and delete the timer on every turn.
    void arm_wait_limit(int max_wait_ms)
    {
        uint64_t now = monotonic_ns();
        uint64_t at = now + static_cast<uint64_t>(max_wait_ms) * 1000000ull;
        if (wait_limit_at_ns > now && wait_limit_at_ns <= at) return;
        struct timeval tv = {max_wait_ms / 1000, (max_wait_ms % 1000) * 1000};
        evtimer_add(wait_limit_ev, &tv);
        wait_limit_at_ns = at;
    }

    // Returns true when some transport still holds pending data afterwards.
    bool deliver_pending()
    {
        bool any = false;
        // A callback may attach or detach transports: index, copy the entry
        // before calling (no per-turn vector copy; a source skipped after a
        // removal is served on the next turn).
        for (size_t i = 0; i < sources.size(); ++i) {
            PendingSource s = sources[i];
            if (s.ops->has_pending_data(s.tloop) > 0) s.ops->process_pending_data(s.tloop);
        }
        for (const PendingSource &s : sources)
            if (s.ops->has_pending_data(s.tloop) > 0) any = true;
        return any;
    }

    void iterate(int max_wait_ms)
    {
        bool busy = deliver_pending();
        if (busy || max_wait_ms == 0) {
            event_base_loop(base, EVLOOP_NONBLOCK);
            return;
        }
        if (max_wait_ms > 0) arm_wait_limit(max_wait_ms);
        event_base_loop(base, EVLOOP_ONCE);
    }
};

Loop::Loop(unsigned index) : impl_(std::make_unique<LoopImpl>())
{
    LoopImpl &d = *impl_;
    d.self = this;
    d.index = index;
    d.handle.loop = this;
    d.owner.store(std::this_thread::get_id());
    struct event_config *cfg = event_config_new();
    if (!cfg) throw std::runtime_error("event_config_new failed");
    // Each loop is used by one thread only; cross-thread work goes through post().
    event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK);
    d.base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    if (!d.base) throw std::runtime_error("event_base_new failed");
    d.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (d.wake_fd < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    d.wake_ev = event_new(d.base, d.wake_fd, EV_READ | EV_PERSIST, LoopImpl::on_wake, &d);
    d.wait_limit_ev = evtimer_new(d.base, LoopImpl::on_wait_limit, &d);
    if (!d.wake_ev || !d.wait_limit_ev || event_add(d.wake_ev, nullptr) != 0)
        throw std::runtime_error("libevent: cannot create the loop's internal events");
}

Loop::~Loop()
{
    LoopImpl &d = *impl_;
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        d.closed = true;
        d.tasks.clear();
    }
    if (d.wake_ev) event_free(d.wake_ev);
    if (d.wait_limit_ev) event_free(d.wait_limit_ev);
    if (d.wake_fd >= 0) ::close(d.wake_fd);
    if (d.base) event_base_free(d.base);
}

unsigned Loop::index() const { return impl_->index; }
event_base *Loop::base() const { return impl_->base; }
tw_loop *Loop::handle() const { return &impl_->handle; }
Loop *Loop::from_handle(tw_loop *loop) { return loop->loop; }

void Loop::bind_to_current_thread() { impl_->owner.store(std::this_thread::get_id()); }
bool Loop::in_loop_thread() const { return impl_->owner.load() == std::this_thread::get_id(); }

void Loop::run()
{
    bind_to_current_thread();
    while (!impl_->stop.load(std::memory_order_acquire)) impl_->iterate(-1);
}

void Loop::run_once(std::chrono::milliseconds max_wait)
{
    bind_to_current_thread();
    impl_->iterate(static_cast<int>(max_wait.count()));
}

bool Loop::run_until(const std::function<bool()> &done, std::chrono::milliseconds timeout)
{
    const uint64_t deadline = monotonic_ns() + static_cast<uint64_t>(timeout.count()) * 1000000ull;
    while (!done()) {
        uint64_t now = monotonic_ns();
        if (now >= deadline) return done();
        uint64_t left_ms = (deadline - now) / 1000000ull;
        run_once(std::chrono::milliseconds(std::min<uint64_t>(left_ms + 1, 50)));
    }
    return true;
}

void Loop::stop()
{
    impl_->stop.store(true, std::memory_order_release);
    impl_->wake();
}

bool Loop::stopping() const { return impl_->stop.load(std::memory_order_acquire); }

bool Loop::post(std::function<void()> fn)
{
    LoopImpl &d = *impl_;
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        if (d.closed) return false;
        d.tasks.push_back(std::move(fn));
    }
    d.wake();
    return true;
}

void Loop::shutdown()
{
    LoopImpl &d = *impl_;
    // Tasks may post more tasks: run until the queue stays empty.
    for (int round = 0; round < 100; ++round) {
        std::vector<std::function<void()>> batch;
        {
            std::lock_guard<std::mutex> lock(d.mutex);
            batch.swap(d.tasks);
            if (batch.empty()) {
                d.closed = true;
                return;
            }
        }
        for (auto &task : batch) run_guarded("posted task", d.index, task);
    }
    std::lock_guard<std::mutex> lock(d.mutex);
    d.closed = true;
    if (!d.tasks.empty())
        TW_WARN("loop", "loop %u shut down with %zu tasks still posting tasks", d.index, d.tasks.size());
    d.tasks.clear();
}

void Loop::add_pending_source(const tw_transport_ops *ops, tw_transport_loop *tloop)
{
    impl_->sources.push_back(PendingSource{ops, tloop});
}

void Loop::remove_pending_source(tw_transport_loop *tloop)
{
    auto &v = impl_->sources;
    v.erase(std::remove_if(v.begin(), v.end(), [tloop](const PendingSource &s) { return s.tloop == tloop; }), v.end());
}

// ---------------------------------------------------------------- Timer

namespace {

struct timeval to_timeval(std::chrono::nanoseconds ns)
{
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(ns).count();
    if (us < 0) us = 0;
    return timeval{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
}

} // namespace

struct __attribute__((visibility("hidden"))) Timer::Impl {
    Loop &loop;
    std::shared_ptr<std::function<void()>> callback; ///< shared: the callback may destroy the timer
    struct event *ev = nullptr;
    std::chrono::nanoseconds period{0};
    bool active = false;

    Impl(Loop &owner, std::function<void()> fn)
        : loop(owner), callback(std::make_shared<std::function<void()>>(std::move(fn)))
    {
        ev = evtimer_new(loop.base(), &Impl::on_fire, this);
        if (!ev) throw std::runtime_error("evtimer_new failed");
    }
    ~Impl()
    {
        if (ev) event_free(ev);
    }

    static void on_fire(int, short, void *arg)
    {
        Impl *t = static_cast<Impl *>(arg);
        if (t->period.count() > 0) {
            struct timeval tv = to_timeval(t->period);
            evtimer_add(t->ev, &tv);
        } else {
            t->active = false;
        }
        // Hold a reference, not a copy of the closure: the callback may
        // destroy the timer (and this Impl), and copying would allocate on
        // every expiry.
        std::shared_ptr<std::function<void()>> cb = t->callback;
        run_guarded("timer callback", t->loop.index(), *cb);
    }
};

Timer::Timer(Loop &loop, std::function<void()> callback) : impl_(std::make_unique<Impl>(loop, std::move(callback))) {}

Timer::~Timer() = default;

void Timer::start(std::chrono::nanoseconds delay, std::chrono::nanoseconds period)
{
    impl_->period = period;
    struct timeval tv = to_timeval(delay);
    evtimer_add(impl_->ev, &tv);
    impl_->active = true;
}

void Timer::stop()
{
    evtimer_del(impl_->ev);
    impl_->active = false;
}

bool Timer::active() const { return impl_->active; }

} // namespace twinwire
