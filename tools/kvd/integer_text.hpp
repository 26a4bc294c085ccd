// SPDX-License-Identifier: MIT
// Integers as Redis reads and writes them: strict decimal text.
#pragma once

#include <charconv>
#include <string>
#include <string_view>

namespace kvd {

/// Strict like Redis: optional '-', digits, no '+', no blanks, no leading
/// zeros, within long long.  "-0" and "007" are not integers.
inline bool parse_integer(std::string_view text, long long &out)
{
    if (text.empty() || text.size() > 20) return false;
    if (text.size() > 1 && (text[0] == '0' || (text[0] == '-' && text[1] == '0'))) return false;
    if (text[0] == '+') return false;
    const char *end = text.data() + text.size();
    auto res = std::from_chars(text.data(), end, out);
    return res.ec == std::errc() && res.ptr == end;
}

inline std::string integer_text(long long value)
{
    char digits[24];
    auto res = std::to_chars(digits, digits + sizeof digits, value);
    return std::string(digits, static_cast<size_t>(res.ptr - digits));
}

} // namespace kvd
