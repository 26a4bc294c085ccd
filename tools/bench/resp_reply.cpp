// SPDX-License-Identifier: MIT
#include "resp_reply.hpp"

#include <cstdio>

namespace twinwire::bench::resp {
namespace {

constexpr int kMaxDepth = 16;
constexpr size_t kKeepText = 200;

using Outcome = Reply::Outcome;

struct Parser {
    std::string_view data;
    Reply out;

    bool malformed(size_t at, std::string what)
    {
        out.outcome = Outcome::Malformed;
        out.problem = what + " at byte " + std::to_string(at);
        return false;
    }

    // The line starting at `pos` (without CRLF); *next is past the CRLF.
    // Returns false with the outcome set when there is no complete line.
    bool line(size_t pos, std::string_view *text, size_t *next)
    {
        for (size_t i = pos; i < data.size(); ++i) {
            char c = data[i];
            if (c == '\n') return malformed(i, "line feed without carriage return");
            if (c != '\r') {
                if (i - pos >= kMaxLine) return malformed(pos, "line longer than 64 KiB");
                continue;
            }
            if (i + 1 >= data.size()) break;
            if (data[i + 1] != '\n') return malformed(i, "carriage return without line feed");
            *text = data.substr(pos, i - pos);
            *next = i + 2;
            return true;
        }
        if (data.size() - pos >= kMaxLine) return malformed(pos, "line longer than 64 KiB");
        out.outcome = Outcome::Incomplete;
        return false;
    }

    // "-1" or digits without sign, spaces or leading zeros (but "0").
    // Accumulated negatively, so the smallest int64_t fits too.
    bool integer(std::string_view text, size_t at, bool allow_minus_one_only, int64_t *value)
    {
        if (text == "-1") {
            *value = -1;
            return true;
        }
        bool negative = !allow_minus_one_only && !text.empty() && text[0] == '-';
        std::string_view digits = negative ? text.substr(1) : text;
        if (digits.empty()) return malformed(at, "empty number");
        if (digits.size() > 1 && digits[0] == '0') return malformed(at, "number with a leading zero");
        int64_t v = 0;
        for (char c : digits) {
            if (c < '0' || c > '9') return malformed(at, "bad number '" + std::string(text) + "'");
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, c - '0', &v))
                return malformed(at, "number out of range");
        }
        if (!negative && __builtin_mul_overflow(v, -1, &v)) return malformed(at, "number out of range");
        *value = v;
        return true;
    }

    // Parses the value at `pos`; sets *end past it, and fills *content when
    // given.
    bool value(size_t pos, int depth, size_t *end, Type *type, Value *content)
    {
        if (pos >= data.size()) {
            out.outcome = Outcome::Incomplete;
            return false;
        }
        if (depth > kMaxDepth) return malformed(pos, "arrays nested deeper than 16");
        const char kind = data[pos];
        std::string_view text;
        size_t next = 0;
        switch (kind) {
        case '+':
        case '-':
            if (!line(pos + 1, &text, &next)) return false;
            *type = kind == '+' ? Type::Status : Type::Error;
            if (depth == 0) out.text = std::string(text.substr(0, kKeepText));
            if (content) content->text = std::string(text);
            *end = next;
            return true;
        case ':': {
            if (!line(pos + 1, &text, &next)) return false;
            int64_t v;
            if (!integer(text, pos + 1, false, &v)) return false;
            if (content) content->integer = v;
            *type = Type::Integer;
            *end = next;
            return true;
        }
        case '$': {
            if (!line(pos + 1, &text, &next)) return false;
            int64_t len;
            if (!integer(text, pos + 1, true, &len)) return false;
            if (len == -1) {
                *type = Type::NullBulk;
                *end = next;
                return true;
            }
            if (len > kMaxBulk) return malformed(pos + 1, "bulk string longer than 512 MiB");
            size_t after = next + static_cast<size_t>(len);
            if (data.size() < after + 2) {
                out.outcome = Outcome::Incomplete;
                if (depth == 0) out.need = after + 2;
                return false;
            }
            if (data[after] != '\r' || data[after + 1] != '\n')
                return malformed(after, "bulk string not followed by CRLF");
            if (content) content->text = std::string(data.substr(next, static_cast<size_t>(len)));
            *type = Type::Bulk;
            *end = after + 2;
            return true;
        }
        case '*': {
            if (!line(pos + 1, &text, &next)) return false;
            int64_t count;
            if (!integer(text, pos + 1, true, &count)) return false;
            if (count == -1) {
                *type = Type::NullArray;
                *end = next;
                return true;
            }
            for (int64_t i = 0; i < count; ++i) {
                Type element;
                Value *element_content = nullptr;
                if (content) element_content = &content->elements.emplace_back();
                if (!value(next, depth + 1, &next, &element, element_content)) return false;
                if (element_content) element_content->type = element;
            }
            *type = Type::Array;
            *end = next;
            return true;
        }
        default: {
            char shown[8];
            unsigned char c = static_cast<unsigned char>(kind);
            if (c >= 0x20 && c < 0x7f) shown[0] = kind, shown[1] = 0;
            else snprintf(shown, sizeof shown, "0x%02x", c);
            return malformed(pos, std::string("unknown reply type '") + shown + "'");
        }
        }
    }
};

} // namespace

const char *to_string(Type type)
{
    switch (type) {
    case Type::Status:
        return "status";
    case Type::Error:
        return "error";
    case Type::Integer:
        return "integer";
    case Type::Bulk:
        return "bulk string";
    case Type::NullBulk:
        return "null bulk string";
    case Type::Array:
        return "array";
    case Type::NullArray:
        return "null array";
    }
    return "?";
}

namespace {

Reply parse(std::string_view data, Value *content)
{
    Parser p{data, {}};
    size_t end = 0;
    Type type = Type::Status;
    if (p.value(0, 0, &end, &type, content)) {
        p.out.outcome = Outcome::Complete;
        p.out.length = end;
        p.out.type = type;
        if (content) content->type = type;
    }
    return p.out;
}

} // namespace

Reply parse_reply(std::string_view data) { return parse(data, nullptr); }

Reply parse_reply(std::string_view data, Value &value)
{
    value = Value();
    return parse(data, &value);
}

bool parse_all(std::string_view data, std::vector<Value> &out)
{
    while (!data.empty()) {
        Value value;
        Reply reply = parse_reply(data, value);
        if (reply.outcome != Reply::Outcome::Complete) return false;
        out.push_back(std::move(value));
        data.remove_prefix(reply.length);
    }
    return true;
}

} // namespace twinwire::bench::resp
