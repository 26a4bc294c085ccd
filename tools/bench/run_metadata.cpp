// SPDX-License-Identifier: MIT
#include "run_metadata.hpp"

#include <ctime>
#include <unistd.h>

#ifndef TW_BENCH_VERSION
#define TW_BENCH_VERSION "unknown"
#endif

namespace twinwire::bench {

RunMetadata describe_run(const Runtime &rt, const std::vector<std::string> &args)
{
    RunMetadata m;
    m.version = TW_BENCH_VERSION;
    char when[32] = "";
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    if (gmtime_r(&now, &utc)) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
    m.time = when;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0) m.host = host;
    for (const std::string &a : args) m.command_line += (m.command_line.empty() ? "" : " ") + a;
    for (const auto &entry : rt.config().entries())
        m.configuration.push_back({entry.first, entry.second.value, entry.second.origin});
    return m;
}

void json_metadata(JsonWriter &j, const RunMetadata &m)
{
    j.key("version").value(m.version).key("time").value(m.time).key("host").value(m.host);
    j.key("command_line").value(m.command_line);
    j.key("configuration").begin_object();
    for (const RunMetadata::Setting &s : m.configuration) {
        j.key(s.key).begin_object();
        j.key("value").value(s.value).key("origin").value(s.origin);
        j.end_object();
    }
    j.end_object();
}

} // namespace twinwire::bench
