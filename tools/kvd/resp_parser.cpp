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
// Argument slots kept between requests: one huge request does not leave
// its memory reserved for the life of the connection.
constexpr size_t kKeepSpans = 4096;

ParseResult incomplete(size_t needed) { return {ParseStatus::Incomplete, 0, needed, {}}; }

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
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    case 'b':
        return '\b';
    case 'a':
        return '\a';
    default:
        return c;
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

void RequestParser::reset()
{
    stage_ = Stage::Start;
    pos_ = scanned_ = count_ = bulk_len_ = 0;
    spans_.clear();
    if (spans_.capacity() > kKeepSpans) std::vector<std::pair<size_t, size_t>>().swap(spans_);
}

ParseResult RequestParser::fail(std::string why)
{
    reset();
    return {ParseStatus::Error, 0, 0, "Protocol error: " + std::move(why)};
}

ParseResult RequestParser::too_large(size_t bytes)
{
    return fail("request of at least " + std::to_string(bytes) + " bytes is larger than max_request_size (" +
                std::to_string(limits_.max_request) + " bytes)");
}

ParseResult RequestParser::complete(std::string_view data, size_t consumed, Request &out)
{
    for (const auto &span : spans_) out.args.emplace_back(data.data() + span.first, span.second);
    reset();
    return {ParseStatus::Complete, consumed, 0, {}};
}

RequestParser::Line RequestParser::header_line(std::string_view data, size_t from, std::string_view &text, size_t &next)
{
    const size_t limit = std::min(data.size(), from + kMaxHeaderLine);
    // A line end found before is found again at once; other bytes are
    // searched once.  (scanned_ is below `from` for a line not yet searched.)
    const size_t start = std::max(from, scanned_);
    const void *cr = start < limit ? std::memchr(data.data() + start, '\r', limit - start) : nullptr;
    if (!cr) {
        if (start < limit) examined_ += limit - start;
        scanned_ = std::max(scanned_, limit);
        return data.size() >= from + kMaxHeaderLine ? Line::TooLong : Line::Missing;
    }
    const size_t at = static_cast<size_t>(static_cast<const char *>(cr) - data.data());
    examined_ += at + 1 - start;
    scanned_ = at;
    if (at + 1 >= data.size()) return Line::Missing;
    ++examined_;
    if (data[at + 1] != '\n') return Line::BadEnd;
    text = data.substr(from, at - from);
    next = at + 2;
    return Line::Found;
}

ParseResult RequestParser::parse_multibulk(std::string_view data, Request &out)
{
    std::string_view text;
    for (;;) {
        switch (stage_) {
        case Stage::Count: {
            size_t next = 0;
            switch (header_line(data, 1, text, next)) {
            case Line::Missing:
                return incomplete(data.size() + 1);
            case Line::TooLong:
                return fail("too big mbulk count string");
            case Line::BadEnd:
                return fail("invalid multibulk length");
            case Line::Found:
                break;
            }
            long long count = 0;
            if (!parse_count(text, count)) return fail("invalid multibulk length");
            if (count > static_cast<long long>(limits_.max_args))
                return fail("invalid multibulk length: " + std::string(text) + " arguments, more than the limit of " +
                            std::to_string(limits_.max_args));
            if (count <= 0) return complete(data, next, out); // "*0", "*-1": nothing to run
            // Only the count is kept: slots grow with the arguments that arrive.
            count_ = static_cast<size_t>(count);
            pos_ = next;
            stage_ = Stage::BulkHeader;
            break;
        }
        case Stage::BulkHeader: {
            const size_t remaining = count_ - spans_.size();
            if (remaining == 0) return complete(data, pos_, out);
            const size_t lower_bound = pos_ + kMinArgBytes * remaining;
            if (lower_bound > limits_.max_request) return too_large(lower_bound);
            // Waiting on a header: every byte may reveal an error, so ask for
            // one more.  Inside a bulk only its end matters (BulkBody).
            if (pos_ >= data.size()) return incomplete(data.size() + 1);
            ++examined_;
            if (data[pos_] != '$') return fail(std::string("expected '$', got '") + data[pos_] + "'");
            stage_ = Stage::BulkLength;
            break;
        }
        case Stage::BulkLength: {
            const size_t remaining = count_ - spans_.size();
            size_t body = 0;
            switch (header_line(data, pos_ + 1, text, body)) {
            case Line::Missing:
                return incomplete(data.size() + 1);
            case Line::TooLong:
                return fail("too big bulk count string");
            case Line::BadEnd:
                return fail("invalid bulk length");
            case Line::Found:
                break;
            }
            long long len = 0;
            if (!parse_count(text, len) || len < 0) return fail("invalid bulk length");
            const size_t needed = body + static_cast<size_t>(len) + 2 + kMinArgBytes * (remaining - 1);
            if (needed > limits_.max_request) return too_large(needed);
            bulk_len_ = static_cast<size_t>(len);
            pos_ = body;
            stage_ = Stage::BulkBody;
            break;
        }
        case Stage::BulkBody: {
            const size_t end = pos_ + bulk_len_ + 2;
            if (data.size() < end) return incomplete(end);
            examined_ += 2;
            if (data[end - 2] != '\r' || data[end - 1] != '\n') return fail("expected CRLF after bulk string");
            spans_.emplace_back(pos_, bulk_len_);
            pos_ = end;
            stage_ = Stage::BulkHeader;
            break;
        }
        case Stage::Start:
        case Stage::Inline:
            return fail("internal: multibulk parse in the wrong stage");
        }
    }
}

ParseResult RequestParser::parse_inline(std::string_view data, Request &out)
{
    // Bytes searched before hold no newline: search only the new ones.
    const size_t start = std::min(scanned_, data.size());
    examined_ += data.size() - start;
    const void *nl = std::memchr(data.data() + start, '\n', data.size() - start);
    if (!nl) {
        scanned_ = data.size();
        if (data.size() > limits_.max_inline) return fail("too big inline request");
        return incomplete(data.size() + 1);
    }
    const size_t len = static_cast<size_t>(static_cast<const char *>(nl) - data.data());
    if (len > limits_.max_inline) return fail("too big inline request");
    std::string_view line = data.substr(0, len);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    examined_ += line.size(); // split_inline reads the line once more
    if (!split_inline(line, out)) return fail("unbalanced quotes in request");
    reset();
    return {ParseStatus::Complete, len + 1, 0, {}};
}

ParseResult RequestParser::parse(std::string_view data, Request &out)
{
    out.args.clear();
    if (data.empty()) return incomplete(1);
    // 0x16 starts a TLS handshake record, never a command: say so rather
    // than "unbalanced quotes" (a TLS client on a plaintext port).
    if (stage_ == Stage::Start && data[0] == '\x16')
        return fail("a TLS handshake on a plaintext port (this port does not speak TLS; see tls.listen_port)");
    if (stage_ == Stage::Start) stage_ = data[0] == '*' ? Stage::Count : Stage::Inline;
    return stage_ == Stage::Inline ? parse_inline(data, out) : parse_multibulk(data, out);
}

ParseResult parse_request(std::string_view data, const RequestLimits &limits, Request &out)
{
    RequestParser parser(limits);
    return parser.parse(data, out);
}

} // namespace kvd
