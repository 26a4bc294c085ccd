// SPDX-License-Identifier: MIT
// One line a second on stderr while a test runs, and the stall watchdog: a
// test whose counters stop moving is aborted instead of hanging forever.
#pragma once

#include "phase.hpp"

#include <twinwire/loop.hpp>

#include <functional>
#include <string>

namespace twinwire::bench {

class Progress {
public:
    using OnStall = std::function<void(const std::string &why)>;

    /// What the line counts: round trips (latency), MB/s sent
    /// (throughput), requests (RESP).
    enum class Unit { RoundTrips, Bytes, Requests };

    Progress(Loop &loop, std::string label, Unit unit, const LiveCounters &live, unsigned stall_timeout_s,
             OnStall on_stall);

private:
    void tick();

    std::string label_;
    Unit unit_;
    const LiveCounters &live_;
    unsigned stall_timeout_s_;
    OnStall on_stall_;
    uint64_t started_ns_;
    uint64_t last_ns_;
    uint64_t last_operations_ = 0;
    uint64_t last_bytes_ = 0;
    unsigned still_seconds_ = 0;
    bool stalled_ = false;
    Timer timer_;
};

} // namespace twinwire::bench
