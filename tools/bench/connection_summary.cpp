// SPDX-License-Identifier: MIT
#include "connection_summary.hpp"

#include "phase.hpp"
#include "text.hpp"

namespace twinwire::bench {

void count_connections(const Phase &phase, ConnectionCounts &counts)
{
    for (const auto &w : phase.workers())
        if (!w->transport.empty()) ++counts[{w->transport, w->fallback_reason}];
}

std::string transport_lines(const std::string &transport, const std::string &reason, const ConnectionCounts &counts)
{
    std::string out = "transport: " + transport + " (" + reason + ")\n";
    for (const auto &entry : counts) {
        out += strprintf("connections: %u over %s", entry.second, entry.first.first.c_str());
        if (!entry.first.second.empty()) out += " (fell back: " + entry.first.second + ")";
        out += "\n";
    }
    return out;
}

void json_connections(JsonWriter &j, const ConnectionCounts &counts)
{
    j.key("connections").begin_array();
    for (const auto &entry : counts) {
        j.begin_object().key("transport").value(entry.first.first);
        j.key("fallback_reason").value(entry.first.second).key("count").value(entry.second).end_object();
    }
    j.end_array();
}

} // namespace twinwire::bench
