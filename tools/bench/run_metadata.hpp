// SPDX-License-Identifier: MIT
// What a result needs to be compared later: the tool's version, when and
// where it ran, the command line and the whole effective configuration.
#pragma once

#include "json_writer.hpp"

#include <twinwire/runtime.hpp>

#include <string>
#include <vector>

namespace twinwire::bench {

struct RunMetadata {
    std::string version;      ///< twinwire-bench's (the project's) version
    std::string time;         ///< start, UTC, ISO 8601
    std::string host;         ///< this host's name
    std::string command_line; ///< the arguments after the program name
    struct Setting {
        std::string key, value, origin;
    };
    std::vector<Setting> configuration; ///< every key with its effective value and origin
};

/// Collected from a started runtime (its configuration) and the arguments.
RunMetadata describe_run(const Runtime &rt, const std::vector<std::string> &args);

/// "version", "time", "host", "command_line" and "configuration" members
/// of the object being written.
void json_metadata(JsonWriter &j, const RunMetadata &m);

} // namespace twinwire::bench
