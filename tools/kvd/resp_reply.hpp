// SPDX-License-Identifier: MIT
// Encoding RESP2 replies into an output string, within a size limit that
// applies while the reply is built (one command cannot build gigabytes).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace kvd {

/// Sends reply bytes straight into the transport's lent send buffers, so a
/// large value is copied once (into memory the transport sends from) rather
/// than into the reply buffer and again into the transport.
class ReplyLender {
public:
    virtual ~ReplyLender() = default;
    /// Send `pending` (the replies before this one), then `pieces`, in
    /// order, and clear `pending`.  False, with nothing sent, when no send
    /// buffer can be lent now: the caller appends to the reply buffer instead.
    /// A write that fails on the way ends the connection and the sending:
    /// true then, the rest dropped with the connection.
    virtual bool send_in_place(std::string &pending, std::initializer_list<std::string_view> pieces) = 0;
};

class Reply {
public:
    static constexpr size_t kUnlimited = static_cast<size_t>(-1);

    /// `out` may not grow past `limit` bytes: what would go beyond is not
    /// written and the reply is marked overflowed (the caller replaces it).
    explicit Reply(std::string &out, size_t limit = kUnlimited) : out_(out), limit_(limit) {}

    /// Room for `bytes` more?  Otherwise the reply is overflowed from now on.
    bool fits(size_t bytes)
    {
        if (!overflowed_ && bytes <= limit_ && out_.size() <= limit_ - bytes) return true;
        overflowed_ = true;
        return false;
    }
    bool overflowed() const { return overflowed_; }
    /// Move the limit (the session sets it per command); clears the overflow.
    void limit_to(size_t limit)
    {
        limit_ = limit;
        overflowed_ = false;
    }

    void ok()
    {
        if (fits(5)) out_.append("+OK\r\n", 5);
    }
    void simple(std::string_view text)
    {
        if (!fits(text.size() + 3)) return;
        out_ += '+';
        append_line(text);
    }
    /// `text` starts with its code: "ERR syntax error", "WRONGTYPE ...".
    void error(std::string_view text)
    {
        if (!fits(text.size() + 3)) return;
        out_ += '-';
        append_line(text);
    }
    void integer(long long value)
    {
        if (!fits(kMaxNumber + 3)) return;
        out_ += ':';
        append_number(value);
        out_.append("\r\n", 2);
    }
    void bulk(std::string_view value)
    {
        if (!fits(value.size() + kMaxNumber + 5)) return;
        out_ += '$';
        append_number(static_cast<long long>(value.size()));
        out_.append("\r\n", 2);
        out_.append(value.data(), value.size());
        out_.append("\r\n", 2);
    }
    /// A bulk reply that is the whole reply (GET): a large one goes through
    /// the lender when one is set, else as bulk().
    void whole_bulk(std::string_view value)
    {
        if (lender_ && value.size() >= kLendFrom && fits(value.size() + kMaxNumber + 5)) {
            char head[kMaxNumber + 4];
            head[0] = '$';
            auto res = std::to_chars(head + 1, head + sizeof head - 2, static_cast<long long>(value.size()));
            res.ptr[0] = '\r';
            res.ptr[1] = '\n';
            std::string_view header(head, static_cast<size_t>(res.ptr + 2 - head));
            if (lender_->send_in_place(out_, {header, value, "\r\n"})) return;
        }
        bulk(value);
    }
    /// Values from this size on are worth sending from lent buffers (below,
    /// the reply buffer batches many replies into one send).
    static constexpr size_t kLendFrom = 16u << 10;
    /// The session sets a lender for replies that cannot be replaced later
    /// (not inside MULTI/EXEC); nullptr: none.
    void lend_through(ReplyLender *lender) { lender_ = lender; }

    void null()
    {
        if (fits(5)) out_.append("$-1\r\n", 5);
    }
    /// RESP2's null array: EXEC of a transaction a WATCH aborted, LPOP with a count on a missing key.
    void null_array()
    {
        if (fits(5)) out_.append("*-1\r\n", 5);
    }
    /// A double as Redis 7.0 writes a score (%.17g; inf, -inf).
    void score(double value)
    {
        if (std::isinf(value)) return bulk(value > 0 ? "inf" : "-inf");
        char text[32];
        int n = std::snprintf(text, sizeof text, "%.17g", value);
        bulk(std::string_view(text, static_cast<size_t>(n)));
    }
    void array(size_t count)
    {
        if (!fits(kMaxNumber + 3)) return;
        out_ += '*';
        append_number(static_cast<long long>(count));
        out_.append("\r\n", 2);
    }

    /// For replies written by hand: call fits() before appending.
    std::string &buffer() { return out_; }

private:
    static constexpr size_t kMaxNumber = 20; ///< digits and sign of a long long
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
    size_t limit_;
    bool overflowed_ = false;
    ReplyLender *lender_ = nullptr;
};

} // namespace kvd
