// SPDX-License-Identifier: MIT
#include "lent_replies.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace kvd {
namespace {

/// The bytes still to send, piece by piece, in order.
struct Cursor {
    std::vector<std::string_view> rest;
    size_t at = 0; ///< index into rest

    bool done() const { return at == rest.size(); }
    /// Copy up to `cap` bytes into `dst`; returns how many.
    size_t fill(char *dst, size_t cap)
    {
        size_t n = 0;
        while (!done() && n < cap) {
            std::string_view &piece = rest[at];
            size_t take = std::min(cap - n, piece.size());
            std::memcpy(dst + n, piece.data(), take);
            n += take;
            piece.remove_prefix(take);
            if (piece.empty()) ++at;
        }
        return n;
    }
};

} // namespace

bool LentReplies::send_in_place(std::string &pending, std::initializer_list<std::string_view> pieces)
{
    Cursor cursor;
    if (!pending.empty()) cursor.rest.push_back(pending);
    for (std::string_view p : pieces)
        if (!p.empty()) cursor.rest.push_back(p);
    auto fill = [&cursor](char *dst, size_t cap) { return cursor.fill(dst, cap); };
    // The first buffer decides: none lent now means the caller copies as
    // before, unless the connection is over (then there is nobody to copy for).
    ssize_t n = conn_.write_lent(0, fill);
    if (n <= 0 && conn_.is_open()) return false;
    // Every pass either sends bytes or ends the loop: a write that fails
    // (the connection ended, or the copy would pass write_buffer_limit)
    // stops it, as nothing after a lost piece may follow in the stream.
    while (n > 0 && !cursor.done()) {
        n = conn_.write_lent(0, fill);
        if (n > 0 || !conn_.is_open()) continue;
        // No buffer free now (or output queued): the rest is copied and
        // queued, in order after what went.
        for (; !cursor.done(); ++cursor.at) {
            if (!conn_.write(cursor.rest[cursor.at])) {
                conn_.abort(); // over write_buffer_limit: the stream cannot be completed
                break;
            }
        }
    }
    pending.clear();
    return true;
}

} // namespace kvd
