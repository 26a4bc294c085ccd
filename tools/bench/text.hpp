// SPDX-License-Identifier: MIT
// Formatting helpers shared by the reports and the progress lines.
#pragma once

#include <cstddef>
#include <string>

namespace twinwire::bench {

/// printf into a std::string (lines up to 1 KiB).
std::string strprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/// "64 B", "4 KiB", "1 MiB", "1000 B".
std::string format_size(size_t bytes);

} // namespace twinwire::bench
