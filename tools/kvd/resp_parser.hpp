// SPDX-License-Identifier: MIT
// Parsing one client request (RESP2 multibulk or an inline line) out of
// contiguous bytes, without copying the arguments.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvd {

struct RequestLimits {
    size_t max_request = 64u << 20; ///< bytes of one whole request (kvd.max_request_size)
    size_t max_inline = 64u << 10;  ///< an inline line without a newline is cut off past this
    size_t max_args = 1u << 20;     ///< elements of one multibulk request
};

/// One parsed request.  The arguments point into the bytes given to
/// parse_request() (or, for inline requests with quotes, into `storage`):
/// valid until those bytes change or the next parse.
struct Request {
    std::vector<std::string_view> args;
    std::string storage; ///< unquoted inline arguments
};

enum class ParseStatus {
    Complete,   ///< `consumed` bytes form a request (args may be empty: blank line, "*0")
    Incomplete, ///< nothing new can be said before `needed` bytes (in total) are there
    Error,      ///< malformed or too large: reply `error` and close the connection
};

struct ParseResult {
    ParseStatus status;
    size_t consumed = 0; ///< Complete: bytes of this request
    size_t needed = 0;   ///< Incomplete: the request is at least this long
    std::string error;   ///< Error: "Protocol error: ..." (no "ERR " prefix, no CRLF)
};

/// Parse the request at the start of `data`.
ParseResult parse_request(std::string_view data, const RequestLimits &limits, Request &out);

/// Split an inline command line like redis-cli and telnet send it: words
/// separated by blanks, "double quotes" with \n \r \t \b \a \\ \" \xHH
/// escapes, 'single quotes' with \'.  Returns false on unbalanced quotes.
bool split_inline(std::string_view line, Request &out);

} // namespace kvd
