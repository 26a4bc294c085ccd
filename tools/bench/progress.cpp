// SPDX-License-Identifier: MIT
#include "progress.hpp"

#include "text.hpp"

#include <cstdio>

namespace twinwire::bench {

Progress::Progress(Loop &loop, std::string label, Unit unit, const LiveCounters &live, unsigned stall_timeout_s,
                   OnStall on_stall)
    : label_(std::move(label)), unit_(unit), live_(live), stall_timeout_s_(stall_timeout_s),
      on_stall_(std::move(on_stall)), started_ns_(monotonic_ns()), last_ns_(started_ns_),
      timer_(loop, [this] { tick(); })
{
    timer_.start(std::chrono::seconds(1), std::chrono::seconds(1));
}

void Progress::tick()
{
    const uint64_t now = monotonic_ns();
    const uint64_t ops = live_.operations.load(std::memory_order_relaxed);
    const uint64_t bytes = live_.bytes.load(std::memory_order_relaxed);
    const double dt = double(now - last_ns_) / 1e9;
    const double rate_ops = dt > 0 ? double(ops - last_operations_) / dt : 0;
    const double rate_mb = dt > 0 ? double(bytes - last_bytes_) / double(1 << 20) / dt : 0;
    std::string line = strprintf("[%s] %4.0f s: ", label_.c_str(), double(now - started_ns_) / 1e9);
    switch (unit_) {
    case Unit::RoundTrips:
        line += strprintf("%.0f round trips/s", rate_ops);
        break;
    case Unit::Bytes:
        line += strprintf("%.2f MB/s sent, %.0f msgs/s", rate_mb, rate_ops);
        break;
    case Unit::Requests:
        line += strprintf("%.0f requests/s", rate_ops);
        break;
    }
    std::fprintf(stderr, "%s\n", line.c_str());

    still_seconds_ = ops == last_operations_ ? still_seconds_ + 1 : 0;
    last_ns_ = now;
    last_operations_ = ops;
    last_bytes_ = bytes;
    if (!stalled_ && still_seconds_ >= stall_timeout_s_) {
        stalled_ = true;
        on_stall_("no progress for " + std::to_string(still_seconds_) + " s (--stall-timeout)");
    }
}

} // namespace twinwire::bench
