// SPDX-License-Identifier: MIT
#include "lent_write.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace twinwire::bench {

size_t write_through_lent(Connection &conn, const char *data, size_t len, bool *would_block)
{
    size_t sent = 0;
    *would_block = false;
    while (sent < len) {
        ssize_t n = conn.write_lent(0, [&](char *buf, size_t cap) {
            size_t take = std::min(cap, len - sent);
            std::memcpy(buf, data + sent, take); // filling the lent buffer is the one copy
            return take;
        });
        // Any other result ends the loop too: -EBUSY and the like leave the
        // rest to the caller's copy, and a failed send ended the connection
        // (the caller's write then fails, and on_close follows).
        if (n <= 0) {
            *would_block = n == -EAGAIN;
            break;
        }
        sent += static_cast<size_t>(n);
    }
    return sent;
}

} // namespace twinwire::bench
