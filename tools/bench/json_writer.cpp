// SPDX-License-Identifier: MIT
#include "json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace twinwire::bench {

void JsonWriter::separate()
{
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) out_ += ',';
        first_.back() = false;
    }
}

JsonWriter &JsonWriter::begin_object()
{
    separate();
    out_ += '{';
    first_.push_back(true);
    return *this;
}

JsonWriter &JsonWriter::end_object()
{
    out_ += '}';
    first_.pop_back();
    return *this;
}

JsonWriter &JsonWriter::begin_array()
{
    separate();
    out_ += '[';
    first_.push_back(true);
    return *this;
}

JsonWriter &JsonWriter::end_array()
{
    out_ += ']';
    first_.pop_back();
    return *this;
}

JsonWriter &JsonWriter::key(std::string_view name)
{
    value(name);
    out_ += ':';
    after_key_ = true;
    return *this;
}

JsonWriter &JsonWriter::value(std::string_view text)
{
    separate();
    out_ += '"';
    for (char ch : text) {
        unsigned char c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"':
            out_ += "\\\"";
            break;
        case '\\':
            out_ += "\\\\";
            break;
        case '\n':
            out_ += "\\n";
            break;
        case '\r':
            out_ += "\\r";
            break;
        case '\t':
            out_ += "\\t";
            break;
        default:
            if (c < 0x20) {
                char esc[8];
                std::snprintf(esc, sizeof esc, "\\u%04x", c);
                out_ += esc;
            } else {
                out_ += ch;
            }
        }
    }
    out_ += '"';
    return *this;
}

JsonWriter &JsonWriter::value(uint64_t number)
{
    separate();
    out_ += std::to_string(number);
    return *this;
}

JsonWriter &JsonWriter::value(double number)
{
    separate();
    if (!std::isfinite(number)) {
        out_ += "null";
        return *this;
    }
    // The shortest text that reads back as the same double: a reader can check
    // exact relations (one way = round trip / 2) that rounded digits would break.
    char text[64];
    const std::to_chars_result end = std::to_chars(text, text + sizeof text, number);
    out_.append(text, end.ptr);
    return *this;
}

JsonWriter &JsonWriter::value(bool flag)
{
    separate();
    out_ += flag ? "true" : "false";
    return *this;
}

} // namespace twinwire::bench
