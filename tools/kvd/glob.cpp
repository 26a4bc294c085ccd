// SPDX-License-Identifier: MIT
#include "glob.hpp"

#include <cstddef>

namespace kvd {
namespace {

char fold(char c, bool nocase) { return (nocase && c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

/// Does the element at pattern[p] (not '*') match `c`?  Sets `next` past it.
bool element_matches(std::string_view pattern, size_t p, char c, bool nocase, size_t &next)
{
    const char x = fold(c, nocase);
    if (pattern[p] == '?') {
        next = p + 1;
        return true;
    }
    if (pattern[p] == '\\' && p + 1 < pattern.size()) {
        next = p + 2;
        return fold(pattern[p + 1], nocase) == x;
    }
    if (pattern[p] != '[') {
        next = p + 1;
        return fold(pattern[p], nocase) == x;
    }
    size_t i = p + 1;
    const bool negate = i < pattern.size() && pattern[i] == '^';
    if (negate) ++i;
    bool hit = false;
    // An unclosed class runs to the end of the pattern, as in Redis.
    for (; i < pattern.size() && pattern[i] != ']'; ++i) {
        if (pattern[i] == '\\' && i + 1 < pattern.size()) {
            hit |= fold(pattern[++i], nocase) == x;
        } else if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
            char lo = fold(pattern[i], nocase), hi = fold(pattern[i + 2], nocase);
            if (lo > hi) {
                char t = lo;
                lo = hi;
                hi = t;
            }
            hit |= lo <= x && x <= hi;
            i += 2;
        } else {
            hit |= fold(pattern[i], nocase) == x;
        }
    }
    next = i < pattern.size() ? i + 1 : i;
    return hit != negate;
}

} // namespace

bool glob_match(std::string_view pattern, std::string_view text, bool nocase)
{
    size_t p = 0, t = 0;
    size_t star = std::string_view::npos, resume = 0;
    while (t < text.size()) {
        size_t next = 0;
        if (p < pattern.size() && pattern[p] == '*') {
            star = ++p;
            resume = t;
        } else if (p < pattern.size() && element_matches(pattern, p, text[t], nocase, next)) {
            p = next;
            ++t;
        } else if (star != std::string_view::npos) {
            p = star;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

} // namespace kvd
