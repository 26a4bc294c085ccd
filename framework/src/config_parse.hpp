// SPDX-License-Identifier: MIT
// Parsing of configuration text: INI lines, integers, sizes, booleans.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace twinwire {

struct IniEntry {
    std::string key; ///< with its section prefix: "rdma.ring_size"
    std::string value;
    int line;
};

/// Parse INI text.  Throws ConfigError "<name>:<line>: ..." on a malformed line.
std::vector<IniEntry> parse_ini(const std::string &text, const std::string &name);

std::optional<int64_t> parse_integer(const std::string &text);
/// "4096", "64k", "64K", "64KiB", "4M", "1G" (powers of 1024).
std::optional<uint64_t> parse_size(const std::string &text);
/// "64 KiB", "4 MiB", "100 B".
std::string format_size(uint64_t bytes);
std::optional<bool> parse_bool(const std::string &text);

/// `text` as an error message shows it: in single quotes, escaped as
/// log::printable() does (\xNN outside printable ASCII, \ doubled), cut
/// after 64 bytes, then "... (N bytes)".  A configuration value can be megabytes of anything, and
/// its error goes to a terminal or a log.
std::string quoted(const std::string &text);

} // namespace twinwire
