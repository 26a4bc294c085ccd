// SPDX-License-Identifier: MIT
// A strict RESP2 reply parser: one reply at the start of the bytes given.
// Anything a correct server would never send (a bare \n, a length with a
// sign or a space, missing CRLF after a bulk, an unknown type byte) is
// Malformed, never guessed at. twinwire-bench checks replies with it, and
// the kvd tests and kvd-probe read what came back through it (Value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

/// What a complete reply holds, for clients that look at it (not only
/// count it): built only when asked for, so load generation allocates nothing.
struct Value {
    using Type = resp::Type;
    Type type = Type::NullBulk;
    std::string text;            ///< Status, Error, Bulk: whole
    int64_t integer = 0;         ///< Integer
    std::vector<Value> elements; ///< Array
};

Reply parse_reply(std::string_view data);
/// The same, and when the reply is Complete its content in `value`.
Reply parse_reply(std::string_view data, Value &value);

/// Every reply in `data` appended to `out`; false when `data` is not a whole
/// number of well-formed replies.
bool parse_all(std::string_view data, std::vector<Value> &out);

} // namespace twinwire::bench::resp
