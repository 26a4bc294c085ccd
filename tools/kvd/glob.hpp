// SPDX-License-Identifier: MIT
// Glob patterns as Redis reads them (KEYS, SCAN MATCH, CONFIG GET).
#pragma once

#include <string_view>

namespace kvd {

/// `*` any run, `?` any byte, `[abc]`, `[a-z]`, `[^abc]` one byte of (not
/// of) a class, `\x` the byte x.  Backtracks to the last `*` only, so a
/// hostile pattern costs at most pattern length x text length.
bool glob_match(std::string_view pattern, std::string_view text, bool nocase = false);

} // namespace kvd
