// SPDX-License-Identifier: MIT
// Per-connection read, write and idle timeouts, and the write watermarks.
//
// One timer per connection, and only when a timeout is set: reads and
// writes just record the time, and the timer, armed for the earliest
// deadline, checks the clocks when it fires and re-arms for what is left.
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
    if (low >= high || high > settings_.write_limit) return false;
    settings_.write_low = low;
    settings_.write_high = high;
    queued_output_changed();
    return true;
}

void Connection::queued_output_changed()
{
    if (!write_blocked_ && output_.size() > settings_.write_high) write_blocked_ = true;
}

void Connection::set_read_timeout(std::chrono::milliseconds timeout)
{
    settings_.read_timeout_ms = static_cast<uint32_t>(std::max<int64_t>(0, timeout.count()));
    last_read_ns_ = monotonic_ns();
    arm_timeouts();
}

void Connection::set_write_timeout(std::chrono::milliseconds timeout)
{
    settings_.write_timeout_ms = static_cast<uint32_t>(std::max<int64_t>(0, timeout.count()));
    last_write_ns_ = monotonic_ns();
    arm_timeouts();
}

void Connection::set_idle_timeout(std::chrono::milliseconds timeout)
{
    settings_.idle_timeout_ms = static_cast<uint32_t>(std::max<int64_t>(0, timeout.count()));
    last_read_ns_ = last_write_ns_ = monotonic_ns();
    arm_timeouts();
}

void Connection::note_read()
{
    if (settings_.read_timeout_ms || settings_.idle_timeout_ms) last_read_ns_ = monotonic_ns();
}

void Connection::note_write_progress()
{
    ++write_progress_;
    if (settings_.write_timeout_ms || settings_.idle_timeout_ms) last_write_ns_ = monotonic_ns();
}

void Connection::arm_timeouts()
{
    if (!established_ || finished_) return;
    const Settings &s = settings_;
    if (!s.read_timeout_ms && !s.write_timeout_ms && !s.idle_timeout_ms) {
        if (timeout_timer_) timeout_timer_->stop();
        return;
    }
    if (!last_read_ns_) last_read_ns_ = monotonic_ns();
    if (!last_write_ns_) last_write_ns_ = monotonic_ns();
    if (!timeout_timer_) {
        std::weak_ptr<Connection> weak = shared_from_this();
        timeout_timer_ = std::make_unique<Timer>(*loop_, [weak] {
            if (auto c = weak.lock()) c->check_timeouts();
        });
    }
    check_timeouts();
}

// Closes the connection when a deadline passed, else re-arms the timer for
// the earliest one still ahead.
void Connection::check_timeouts()
{
    if (finished_ || !established_) return;
    const Settings &s = settings_;
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
    if (s.read_timeout_ms && reading_ && !peer_eof_ && due(s.read_timeout_ms, last_read_ns_)) {
        which = "read_timeout_ms", what = "nothing received", limit = s.read_timeout_ms;
    } else if (s.write_timeout_ms && !output_.empty() && due(s.write_timeout_ms, last_write_ns_)) {
        which = "write_timeout_ms", what = "queued output made no progress", limit = s.write_timeout_ms;
    } else if (s.idle_timeout_ms && due(s.idle_timeout_ms, std::max(last_read_ns_, last_write_ns_))) {
        which = "idle_timeout_ms", what = "no traffic either way", limit = s.idle_timeout_ms;
    }
    if (which) {
        output_.clear();
        finish(errc::timed_out, -ETIMEDOUT, std::string(which) + ": " + what + " for " + std::to_string(limit) + " ms",
               false, false);
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
    timeout_timer_->start(std::chrono::nanoseconds(next - now));
}

} // namespace twinwire
