// SPDX-License-Identifier: MIT
// Parsing one client request (RESP2 multibulk or an inline line) out of
// contiguous bytes, without copying the arguments.  The parser is
// incremental: a request arriving in pieces is parsed once, each call
// resuming where the previous one stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvd {

struct RequestLimits {
    size_t max_request = 64u << 20; ///< bytes of one whole request (kvd.max_request_size)
    size_t max_inline = 64u << 10;  ///< an inline line without a newline is cut off past this
    size_t max_args = 1u << 20;     ///< elements of one multibulk request (Redis: 1024 * 1024 in practice)
    size_t max_reply = 64u << 20;   ///< bytes of one reply (write_buffer_limit in the daemon)
};

/// One parsed request.  The arguments point into the bytes given to the
/// parser (or, for inline requests with quotes, into `storage`): valid until
/// those bytes change or the next parse.
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

/// Parses the request at the front of a byte stream, resuming after
/// Incomplete: each byte is examined a bounded number of times however the
/// request is split, and nothing is reserved from a count the client sent.
class RequestParser {
public:
    explicit RequestParser(const RequestLimits &limits) : limits_(limits) {}

    /// `data` starts at the request's first byte.  After Incomplete, the next
    /// call must pass the same bytes (they may have moved) and possibly more.
    /// Complete and Error end the request: the next call starts a new one.
    ParseResult parse(std::string_view data, Request &out);
    /// Forget a request in progress.
    void reset();

    /// Bytes examined since construction: what the tests count to show the
    /// work is linear in the input.
    uint64_t bytes_examined() const { return examined_; }
    /// Argument slots held for the request in progress (never more than
    /// arrived: a count alone reserves nothing).
    size_t slots_reserved() const { return spans_.capacity(); }

private:
    enum class Stage { Start, Count, BulkHeader, BulkLength, BulkBody, Inline };
    enum class Line { Found, Missing, TooLong, BadEnd };

    ParseResult parse_multibulk(std::string_view data, Request &out);
    ParseResult parse_inline(std::string_view data, Request &out);
    /// The header line starting at `from` (after its type byte) up to "\r\n",
    /// searching only bytes not searched before.
    Line header_line(std::string_view data, size_t from, std::string_view &text, size_t &next);
    ParseResult complete(std::string_view data, size_t consumed, Request &out);
    ParseResult fail(std::string why);
    ParseResult too_large(size_t bytes);

    RequestLimits limits_;
    Stage stage_ = Stage::Start;
    size_t pos_ = 0;                               ///< start of the element being parsed
    size_t scanned_ = 0;                           ///< bytes before this hold no line end (of the current line)
    size_t count_ = 0;                             ///< arguments the multibulk header announced
    size_t bulk_len_ = 0;                          ///< BulkBody: length of the bulk starting at pos_
    std::vector<std::pair<size_t, size_t>> spans_; ///< offset and length of each argument parsed
    uint64_t examined_ = 0;
};

/// Parse a request given whole (a fresh parser; tests and one-shot callers).
ParseResult parse_request(std::string_view data, const RequestLimits &limits, Request &out);

/// Split an inline command line like redis-cli and telnet send it: words
/// separated by blanks, "double quotes" with \n \r \t \b \a \\ \" \xHH
/// escapes, 'single quotes' with \'.  Returns false on unbalanced quotes.
bool split_inline(std::string_view line, Request &out);

} // namespace kvd
