// SPDX-License-Identifier: MIT
// Which transport the connections of a run used, and why some fell back:
// counted while the tests run, printed the same way by every report.
#pragma once

#include "json_writer.hpp"

#include <map>
#include <string>
#include <utility>

namespace twinwire::bench {

class Phase;

/// (transport, fallback reason) -> number of connections.
using ConnectionCounts = std::map<std::pair<std::string, std::string>, unsigned>;

/// Add the connections of a finished phase (those that connected).
void count_connections(const Phase &phase, ConnectionCounts &counts);

/// "transport: rdma (why)" and one "connections: N over rdma" line per kind.
std::string transport_lines(const std::string &transport, const std::string &reason, const ConnectionCounts &counts);
/// "connections": [{"transport", "fallback_reason", "count"}...]
void json_connections(JsonWriter &j, const ConnectionCounts &counts);

} // namespace twinwire::bench
