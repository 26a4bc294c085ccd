// SPDX-License-Identifier: MIT
#include "resp_parser.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace kvd {
namespace {

// "*1048576\r\n" and "$536870912\r\n" are far shorter; a longer header line
// is garbage, not a request still arriving.
constexpr size_t kMaxHeaderLine = 32;
// The smallest possible argument, "$0\r\n\r\n": a lower bound for what is
// still missing, so a request too large is refused before it arrives.
constexpr size_t kMinArgBytes = 6;

ParseResult incomplete(size_t needed) { return {ParseStatus::Incomplete, 0, needed, {}}; }
ParseResult error(std::string why) { return {ParseStatus::Error, 0, 0, "Protocol error: " + std::move(why)}; }
ParseResult too_large(size_t bytes, const RequestLimits &limits)
{
    return error("request of at least " + std::to_string(bytes) + " bytes is larger than max_request_size (" +
                 std::to_string(limits.max_request) + " bytes)");
}

/// A decimal without sign or leading '+', at most 18 digits (no overflow).
bool parse_count(std::string_view text, long long &out)
{
    bool negative = !text.empty() && text[0] == '-';
    if (negative) text.remove_prefix(1);
    if (text.empty() || text.size() > 18) return false;
    long long v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    out = negative ? -v : v;
    return true;
}

enum class Line { Found, Missing, TooLong, BadEnd };

/// The header line starting at `from` (after its type byte) up to "\r\n".
Line header_line(std::string_view data, size_t from, std::string_view &text, size_t &next)
{
    size_t limit = std::min(data.size(), from + kMaxHeaderLine);
    const void *cr = std::memchr(data.data() + from, '\r', limit > from ? limit - from : 0);
    if (!cr) return data.size() >= from + kMaxHeaderLine ? Line::TooLong : Line::Missing;
    size_t at = static_cast<size_t>(static_cast<const char *>(cr) - data.data());
    if (at + 1 >= data.size()) return Line::Missing;
    if (data[at + 1] != '\n') return Line::BadEnd;
    text = data.substr(from, at - from);
    next = at + 2;
    return Line::Found;
}

ParseResult parse_multibulk(std::string_view data, const RequestLimits &limits, Request &out)
{
    std::string_view text;
    size_t pos = 0;
    switch (header_line(data, 1, text, pos)) {
    case Line::Missing: return incomplete(data.size() + 1);
    case Line::TooLong: return error("too big mbulk count string");
    case Line::BadEnd: return error("invalid multibulk length");
    case Line::Found: break;
    }
    long long count = 0;
    if (!parse_count(text, count) || count > static_cast<long long>(limits.max_args))
        return error("invalid multibulk length");
    if (count <= 0) return {ParseStatus::Complete, pos, 0, {}}; // "*0", "*-1": nothing to run

    const size_t n = static_cast<size_t>(count);
    out.args.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        size_t lower_bound = pos + kMinArgBytes * (n - i);
        if (lower_bound > limits.max_request) return too_large(lower_bound, limits);
        // Waiting on a header: every byte may reveal an error, so ask for
        // one more.  Inside a bulk only its end matters (see below).
        if (pos >= data.size()) return incomplete(data.size() + 1);
        if (data[pos] != '$') return error(std::string("expected '$', got '") + data[pos] + "'");
        size_t body = 0;
        switch (header_line(data, pos + 1, text, body)) {
        case Line::Missing: return incomplete(data.size() + 1);
        case Line::TooLong: return error("too big bulk count string");
        case Line::BadEnd: return error("invalid bulk length");
        case Line::Found: break;
        }
        long long len = 0;
        if (!parse_count(text, len) || len < 0) return error("invalid bulk length");
        size_t end = body + static_cast<size_t>(len) + 2;
        size_t needed = end + kMinArgBytes * (n - i - 1);
        if (needed > limits.max_request) return too_large(needed, limits);
        if (data.size() < end) return incomplete(end);
        if (data[end - 2] != '\r' || data[end - 1] != '\n') return error("expected CRLF after bulk string");
        out.args.emplace_back(data.data() + body, static_cast<size_t>(len));
        pos = end;
    }
    return {ParseStatus::Complete, pos, 0, {}};
}

ParseResult parse_inline(std::string_view data, const RequestLimits &limits, Request &out)
{
    const void *nl = std::memchr(data.data(), '\n', data.size());
    if (!nl) {
        if (data.size() > limits.max_inline) return error("too big inline request");
        return incomplete(data.size() + 1);
    }
    size_t len = static_cast<size_t>(static_cast<const char *>(nl) - data.data());
    if (len > limits.max_inline) return error("too big inline request");
    std::string_view line = data.substr(0, len);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!split_inline(line, out)) return error("unbalanced quotes in request");
    return {ParseStatus::Complete, len + 1, 0, {}};
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

char unescape(char c)
{
    switch (c) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'b': return '\b';
    case 'a': return '\a';
    default: return c;
    }
}

} // namespace

bool split_inline(std::string_view line, Request &out)
{
    std::vector<std::pair<size_t, size_t>> spans; // offsets into out.storage
    std::string &s = out.storage;
    s.clear();
    size_t p = 0;
    const size_t n = line.size();
    while (true) {
        while (p < n && is_blank(line[p])) ++p;
        if (p >= n) break;
        size_t start = s.size();
        char quote = 0;
        for (;;) {
            if (quote == '"') {
                if (p >= n) return false;
                char c = line[p];
                if (c == '\\' && p + 3 < n && line[p + 1] == 'x' && hex_value(line[p + 2]) >= 0 &&
                    hex_value(line[p + 3]) >= 0) {
                    s += static_cast<char>(hex_value(line[p + 2]) * 16 + hex_value(line[p + 3]));
                    p += 4;
                } else if (c == '\\' && p + 1 < n) {
                    s += unescape(line[p + 1]);
                    p += 2;
                } else if (c == '"') {
                    ++p;
                    if (p < n && !is_blank(line[p])) return false; // "foo"bar
                    break;
                } else {
                    s += c;
                    ++p;
                }
            } else if (quote == '\'') {
                if (p >= n) return false;
                char c = line[p];
                if (c == '\\' && p + 1 < n && line[p + 1] == '\'') {
                    s += '\'';
                    p += 2;
                } else if (c == '\'') {
                    ++p;
                    if (p < n && !is_blank(line[p])) return false;
                    break;
                } else {
                    s += c;
                    ++p;
                }
            } else {
                if (p >= n || is_blank(line[p])) break;
                if (line[p] == '"' || line[p] == '\'') quote = line[p];
                else s += line[p];
                ++p;
            }
        }
        spans.emplace_back(start, s.size() - start);
    }
    for (const auto &span : spans) out.args.emplace_back(s.data() + span.first, span.second);
    return true;
}

ParseResult parse_request(std::string_view data, const RequestLimits &limits, Request &out)
{
    out.args.clear();
    if (data.empty()) return incomplete(1);
    if (data[0] == '*') return parse_multibulk(data, limits, out);
    return parse_inline(data, limits, out);
}

} // namespace kvd
