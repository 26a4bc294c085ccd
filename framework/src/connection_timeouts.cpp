// SPDX-License-Identifier: MIT
// Per-connection read, write and idle timeouts, and the write watermarks.
//
// One timer per connection, and only when a timeout is set: reads and
// writes just record the time, and the timer, armed for the earliest
// deadline, checks the clocks when it fires and re-arms for what is left.
#include "connection_impl.hpp"

#include <twinwire/connection.hpp>
#include <twinwire/loop.hpp>

#include <algorithm>
#include <cerrno>

namespace twinwire {
namespace {

constexpr uint64_t kNsPerMs = 1000000;

} // namespace

bool Connection::set_write_watermarks(size_t low, size_t high)
{
    Impl &m = *impl_;
    if (low >= high || high > m.settings.write_limit) return false;
    m.settings.write_low = low;
    m.settings.write_high = high;
    m.queued_output_changed();
    return true;
}

void Connection::Impl::queued_output_changed()
{
    if (!out.blocked && out.buffer.size() > settings.write_high) out.blocked = true;
}

void Connection::set_read_timeout(std::chrono::milliseconds timeout)
{
    Impl &m = *impl_;
    m.settings.read_timeout_ms = static_cast<uint32_t>(std::max<int64_t>(0, timeout.count()));
    m.in.last_read_ns = monotonic_ns();
    m.arm_timeouts();
}

void Connection::set_write_timeout(std::chrono::milliseconds timeout)
{
    Impl &m = *impl_;
    m.settings.write_timeout_ms = static_cast<uint32_t>(std::max<int64_t>(0, timeout.count()));
    m.out.last_write_ns = monotonic_ns();
    m.arm_timeouts();
}

void Connection::set_idle_timeout(std::chrono::milliseconds timeout)
{
    Impl &m = *impl_;
    m.settings.idle_timeout_ms = static_cast<uint32_t>(std::max<int64_t>(0, timeout.count()));
    m.in.last_read_ns = m.out.last_write_ns = monotonic_ns();
    m.arm_timeouts();
}

void Connection::Impl::note_read()
{
    if (settings.read_timeout_ms || settings.idle_timeout_ms) in.last_read_ns = monotonic_ns();
}

void Connection::Impl::note_write_progress()
{
    ++out.progress;
    if (settings.write_timeout_ms || settings.idle_timeout_ms) out.last_write_ns = monotonic_ns();
}

void Connection::Impl::arm_timeouts()
{
    if (!life.established()) return;
    const Settings &s = settings;
    if (!s.read_timeout_ms && !s.write_timeout_ms && !s.idle_timeout_ms) {
        if (timers.timeout) timers.timeout->stop();
        return;
    }
    if (!in.last_read_ns) in.last_read_ns = monotonic_ns();
    if (!out.last_write_ns) out.last_write_ns = monotonic_ns();
    if (!timers.timeout) {
        std::weak_ptr<Connection> weak = owner->shared_from_this();
        timers.timeout = std::make_unique<Timer>(*loop, [weak] {
            if (auto c = weak.lock()) c->impl_->check_timeouts();
        });
    }
    check_timeouts();
}

// Closes the connection when a deadline passed, else re-arms the timer for
// the earliest one still ahead.
void Connection::Impl::check_timeouts()
{
    if (!life.established()) return;
    const Settings &s = settings;
    const uint64_t now = monotonic_ns();
    uint64_t next = UINT64_MAX;
    auto due = [&](uint32_t ms, uint64_t since) {
        uint64_t deadline = since + ms * kNsPerMs;
        if (deadline <= now) return true;
        next = std::min(next, deadline);
        return false;
    };
    const char *which = nullptr;
    const char *what = nullptr;
    uint32_t limit = 0;
    if (s.read_timeout_ms && in.reading && !in.peer_eof && due(s.read_timeout_ms, in.last_read_ns)) {
        which = "read_timeout_ms", what = "nothing received", limit = s.read_timeout_ms;
    } else if (s.write_timeout_ms && !out.buffer.empty() && due(s.write_timeout_ms, out.last_write_ns)) {
        which = "write_timeout_ms", what = "queued output made no progress", limit = s.write_timeout_ms;
    } else if (s.idle_timeout_ms && due(s.idle_timeout_ms, std::max(in.last_read_ns, out.last_write_ns))) {
        which = "idle_timeout_ms", what = "no traffic either way", limit = s.idle_timeout_ms;
    }
    if (which) {
        out.buffer.clear();
        finish(errc::timed_out, -ETIMEDOUT, std::string(which) + ": " + what + " for " + std::to_string(limit) + " ms",
               EndedBy::us, OnClose::run_now);
        return;
    }
    if (next == UINT64_MAX) {
        // Nothing to time right now (reading paused, no output): look again
        // after the shortest timeout.
        uint32_t shortest = UINT32_MAX;
        for (uint32_t ms : {s.read_timeout_ms, s.write_timeout_ms, s.idle_timeout_ms})
            if (ms) shortest = std::min(shortest, ms);
        next = now + shortest * kNsPerMs;
    }
    timers.timeout->start(std::chrono::nanoseconds(next - now));
}

} // namespace twinwire
