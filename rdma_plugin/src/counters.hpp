// SPDX-License-Identifier: MIT
// Transport-wide counters, shared by every loop (hence atomic).
#pragma once

#include <twinwire/transport.h>

#include <atomic>
#include <cstdint>

namespace twrdma {

struct TransportCounters {
    std::atomic<int64_t> connections_open{0};
    std::atomic<uint64_t> connections_accepted{0};
    std::atomic<uint64_t> connections_connected{0};
    std::atomic<uint64_t> handshakes_aborted{0};
    std::atomic<int64_t> registered_bytes{0};
    std::atomic<int64_t> registered_in_use{0};
    std::atomic<uint64_t> pool_exhausted{0};
    std::atomic<int64_t> quarantined_bytes{0};
    /// rdma_cm ADDR_CHANGE (a bound address moved to another hardware
    /// address, as a bonding failover does): described, not in the stats.
    std::atomic<uint64_t> addr_change_listeners{0};   ///< set up again
    std::atomic<uint64_t> addr_change_connections{0}; ///< failed

    void fill(tw_transport_stats *out) const;
};

} // namespace twrdma
