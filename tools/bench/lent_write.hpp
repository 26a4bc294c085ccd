// SPDX-License-Identifier: MIT
// --zero-copy's send side: bytes go out through lent transport buffers.
#pragma once

#include <twinwire/connection.hpp>

#include <cstddef>

namespace twinwire::bench {

/// Send `len` bytes through lent send buffers (Connection::write_lent), as
/// many buffers as it takes.  Returns how many bytes went out that way; the
/// caller writes the rest (copying) or, when *would_block is set and nothing
/// went, waits for on_drain.  It stops at the first write that fails: when
/// that ended the connection (conn.is_open() is false) the caller's write of
/// the rest fails too, and nothing loops.
size_t write_through_lent(Connection &conn, const char *data, size_t len, bool *would_block);

} // namespace twinwire::bench
