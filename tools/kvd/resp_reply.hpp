// SPDX-License-Identifier: MIT
// Encoding RESP2 replies into an output string.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvd {

class Reply {
public:
    explicit Reply(std::string &out) : out_(out) {}

    void ok() { out_.append("+OK\r\n", 5); }
    void simple(std::string_view text)
    {
        out_ += '+';
        append_line(text);
    }
    /// `text` starts with its code: "ERR syntax error", "WRONGTYPE ...".
    void error(std::string_view text)
    {
        out_ += '-';
        append_line(text);
    }
    void integer(long long value)
    {
        out_ += ':';
        append_number(value);
        out_.append("\r\n", 2);
    }
    void bulk(std::string_view value)
    {
        out_ += '$';
        append_number(static_cast<long long>(value.size()));
        out_.append("\r\n", 2);
        out_.append(value.data(), value.size());
        out_.append("\r\n", 2);
    }
    void null() { out_.append("$-1\r\n", 5); }
    void array(size_t count)
    {
        out_ += '*';
        append_number(static_cast<long long>(count));
        out_.append("\r\n", 2);
    }

    std::string &buffer() { return out_; }

private:
    void append_number(long long value)
    {
        char digits[24];
        auto res = std::to_chars(digits, digits + sizeof digits, value);
        out_.append(digits, static_cast<size_t>(res.ptr - digits));
    }
    /// Status and error lines cannot carry CR or LF: they become spaces.
    void append_line(std::string_view text)
    {
        size_t start = out_.size();
        out_.append(text.data(), text.size());
        for (size_t i = start; i < out_.size(); ++i)
            if (out_[i] == '\r' || out_[i] == '\n') out_[i] = ' ';
        out_.append("\r\n", 2);
    }
    std::string &out_;
};

} // namespace kvd
