// SPDX-License-Identifier: MIT
#include "text.hpp"

#include <cstdarg>
#include <cstdio>

namespace twinwire::bench {

std::string strprintf(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return line;
}

std::string format_size(size_t bytes)
{
    const size_t mib = size_t(1) << 20;
    if (bytes >= mib && bytes % mib == 0) return std::to_string(bytes / mib) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
    return std::to_string(bytes) + " B";
}

} // namespace twinwire::bench
