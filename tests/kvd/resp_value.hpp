// SPDX-License-Identifier: MIT
// Reading RESP2 replies on the client side (tests and kvd-probe).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvd_test {

struct Value {
    enum class Type { Simple, Error, Integer, Bulk, Null, Array, NullArray };
    Type type = Type::Null;
    std::string text;      ///< Simple, Error, Bulk
    long long integer = 0; ///< Integer
    std::vector<Value> elements;

    /// As `redis-cli` prints replies when its output is not a terminal.
    std::string cli_text() const;
};

enum class ReadStatus { Complete, Incomplete, Malformed };

/// Read one reply at the start of `data`; `consumed` is its length.
ReadStatus read_value(std::string_view data, Value &out, size_t &consumed, int depth = 0);

/// Read every reply in `data`; false when it is not a whole number of
/// well-formed replies.
bool read_all(std::string_view data, std::vector<Value> &out);

inline std::string Value::cli_text() const
{
    switch (type) {
    case Type::Simple:
    case Type::Error:
    case Type::Bulk:
        return text;
    case Type::Integer:
        return std::to_string(integer);
    case Type::Null:
    case Type::NullArray:
        return "";
    case Type::Array: {
        std::string s;
        for (size_t i = 0; i < elements.size(); ++i) s += (i ? "\n" : "") + elements[i].cli_text();
        return s;
    }
    }
    return "";
}

namespace detail {

inline ReadStatus read_line(std::string_view data, size_t from, std::string_view &line, size_t &next)
{
    size_t cr = data.find("\r\n", from);
    if (cr == std::string_view::npos) return ReadStatus::Incomplete;
    line = data.substr(from, cr - from);
    next = cr + 2;
    return ReadStatus::Complete;
}

inline bool to_integer(std::string_view text, long long &out)
{
    if (text.empty() || text.size() > 20) return false;
    size_t i = text[0] == '-' ? 1 : 0;
    if (i == text.size()) return false;
    long long v = 0;
    for (; i < text.size(); ++i) {
        if (text[i] < '0' || text[i] > '9') return false;
        v = v * 10 + (text[i] - '0');
    }
    out = text[0] == '-' ? -v : v;
    return true;
}

} // namespace detail

inline ReadStatus read_value(std::string_view data, Value &out, size_t &consumed, int depth)
{
    if (data.empty()) return ReadStatus::Incomplete;
    if (depth > 16) return ReadStatus::Malformed;
    std::string_view line;
    size_t pos = 0;
    ReadStatus st = detail::read_line(data, 1, line, pos);
    if (st != ReadStatus::Complete) return st;
    out = Value();
    switch (data[0]) {
    case '+':
    case '-':
        if (line.find_first_of("\r\n") != std::string_view::npos) return ReadStatus::Malformed;
        out.type = data[0] == '+' ? Value::Type::Simple : Value::Type::Error;
        out.text = std::string(line);
        consumed = pos;
        return ReadStatus::Complete;
    case ':':
        out.type = Value::Type::Integer;
        if (!detail::to_integer(line, out.integer)) return ReadStatus::Malformed;
        consumed = pos;
        return ReadStatus::Complete;
    case '$': {
        long long len = 0;
        if (!detail::to_integer(line, len) || len < -1) return ReadStatus::Malformed;
        if (len == -1) {
            out.type = Value::Type::Null;
            consumed = pos;
            return ReadStatus::Complete;
        }
        size_t end = pos + static_cast<size_t>(len);
        if (data.size() < end + 2) return ReadStatus::Incomplete;
        if (data.substr(end, 2) != "\r\n") return ReadStatus::Malformed;
        out.type = Value::Type::Bulk;
        out.text = std::string(data.substr(pos, static_cast<size_t>(len)));
        consumed = end + 2;
        return ReadStatus::Complete;
    }
    case '*': {
        long long count = 0;
        if (!detail::to_integer(line, count) || count < -1) return ReadStatus::Malformed;
        if (count == -1) {
            out.type = Value::Type::NullArray;
            consumed = pos;
            return ReadStatus::Complete;
        }
        out.type = Value::Type::Array;
        for (long long i = 0; i < count; ++i) {
            Value element;
            size_t used = 0;
            st = read_value(data.substr(pos), element, used, depth + 1);
            if (st != ReadStatus::Complete) return st;
            out.elements.push_back(std::move(element));
            pos += used;
        }
        consumed = pos;
        return ReadStatus::Complete;
    }
    default:
        return ReadStatus::Malformed;
    }
}

inline bool read_all(std::string_view data, std::vector<Value> &out)
{
    while (!data.empty()) {
        Value v;
        size_t used = 0;
        if (read_value(data, v, used) != ReadStatus::Complete) return false;
        out.push_back(std::move(v));
        data.remove_prefix(used);
    }
    return true;
}

} // namespace kvd_test
