// SPDX-License-Identifier: MIT
// A strict RESP2 reply parser: one reply at the start of the bytes given.
// Anything a correct server would never send (a bare \n, a length with a
// sign or a space, missing CRLF after a bulk, an unknown type byte) is
// Malformed, never guessed at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace twinwire::bench::resp {

enum class Type { Status, Error, Integer, Bulk, NullBulk, Array, NullArray };
const char *to_string(Type type);

struct Reply {
    enum class Outcome { Complete, Incomplete, Malformed };
    Outcome outcome = Outcome::Incomplete;
    size_t length = 0; ///< Complete: bytes the reply takes
    size_t need = 0;   ///< Incomplete: total bytes needed when known, else 0
    Type type = Type::Status;
    std::string text;    ///< Status / Error line (at most 200 bytes kept)
    std::string problem; ///< Malformed: what is wrong, and at which offset
};

/// Largest bulk string accepted (Redis' proto-max-bulk-len default).
constexpr int64_t kMaxBulk = int64_t(512) << 20;
/// Longest status, error or length line accepted before it counts as malformed.
constexpr size_t kMaxLine = 64u << 10;

Reply parse_reply(std::string_view data);

} // namespace twinwire::bench::resp
