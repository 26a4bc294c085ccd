// SPDX-License-Identifier: MIT
// What a latency / throughput sweep measured, and how it is printed: a table
// for people, one JSON document for scripts.
#pragma once

#include "connection_summary.hpp"
#include "histogram.hpp"
#include "phase.hpp"
#include "run_metadata.hpp"

#include <twinwire/transport.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace twinwire::bench {

struct LatencyResult {
    size_t size = 0;
    unsigned connections = 0;
    Histogram round_trip_ns;
    double seconds = 0;    ///< measurement window, first send to last echo
    tw_conn_stats stats{}; ///< client-side transport counters, all connections
    RingsSummary rings;    ///< client-side RDMA rings at the end
    std::string io_path;   ///< io_path(): "copy", "zero-copy" or the fallback
    std::vector<std::string> errors;
};

struct ThroughputResult {
    size_t size = 0;
    unsigned connections = 0;
    uint64_t bytes = 0;         ///< acknowledged by the sink; both directions: sent plus echoed back
    bool bidirectional = false; ///< -b: both directions at once, summed
    uint64_t messages = 0;
    double seconds = 0;    ///< first write to last acknowledgement
    tw_conn_stats stats{}; ///< client-side transport counters, all connections
    RingsSummary rings;    ///< client-side RDMA rings at the end
    std::string io_path;   ///< io_path(): "copy", "zero-copy" or the fallback
    std::vector<std::string> errors;

    double mb_per_s() const { return seconds > 0 ? double(bytes) / double(1 << 20) / seconds : 0; }
    /// Gb/s as link rates count (10^9 bits), beside MB/s as perftest counts.
    double gbit_per_s() const { return seconds > 0 ? double(bytes) * 8 / 1e9 / seconds : 0; }
    double messages_per_s() const { return seconds > 0 ? double(messages) / seconds : 0; }
};

struct SweepReport {
    std::string mode;             ///< "client" or "local"
    std::string target;           ///< "10.0.0.2:7379"
    std::string transport;        ///< Runtime::transport_name()
    std::string transport_reason; ///< Runtime::transport_reason()
    ConnectionCounts connections; ///< of every test
    unsigned threads = 1;
    std::vector<LatencyResult> latency;
    std::vector<ThroughputResult> throughput;
    bool interrupted = false; ///< SIGINT ended it early
    RunMetadata meta;         ///< version, time, host, configuration (JSON)

    size_t error_count() const;
};

/// Which path a test's client ran, from its transport counters: "copy"
/// (not asked for), "zero-copy", or which half fell back to copying because
/// the transport lent no buffers.
std::string io_path(bool zero_copy_requested, const tw_conn_stats &client_stats);

std::string sweep_table(const SweepReport &report);
std::string sweep_json(const SweepReport &report);
/// One header line, then one line per test and size (latency and throughput
/// columns side by side, the other test's left empty).
std::string sweep_csv(const SweepReport &report);

} // namespace twinwire::bench
