// SPDX-License-Identifier: MIT
// What the RESP load mode measured, as a table or one JSON document.
#pragma once

#include "connection_summary.hpp"
#include "histogram.hpp"
#include "run_metadata.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace twinwire::bench {

struct RespResult {
    std::string test;       ///< "SET", "GET"
    uint64_t requested = 0; ///< --requests
    uint64_t replies = 0;   ///< good replies
    uint64_t error_replies = 0;
    Histogram latency_ns;
    double seconds = 0;
    std::vector<std::string> errors; ///< failed connections, first error replies

    double requests_per_s() const { return seconds > 0 ? double(replies + error_replies) / seconds : 0; }
    uint64_t error_count() const;
};

struct RespReport {
    std::string target;
    std::string transport;
    std::string transport_reason;
    ConnectionCounts connections; ///< of every test
    unsigned clients = 0;
    unsigned pipeline = 1;
    size_t data_size = 0;
    uint64_t keyspace = 0;
    std::vector<RespResult> results;
    bool interrupted = false;
    RunMetadata meta; ///< version, time, host, configuration (JSON)

    uint64_t error_count() const;
};

std::string resp_table(const RespReport &report);
std::string resp_json(const RespReport &report);
/// A header line, then one line per test.
std::string resp_csv(const RespReport &report);

} // namespace twinwire::bench
