// SPDX-License-Identifier: MIT
// Reused blocks for large reads.  A connection that streams reads its
// transport in read_buffer_size pieces; as libevent chains those are fresh
// mallocs that the reader frees again, and glibc gives the freed top of the
// heap back and faults it in anew for the next read: nearly every byte
// received landed in a page the kernel had just zeroed.  Reading into a block
// from here and handing it to the input buffer by reference (the block comes
// back when libevent frees the last reference) reuses the same memory.
#pragma once

#include <cstddef>

struct evbuffer;

namespace twinwire::read_blocks {

struct Block;

/// Blocks are at least this large (so the cache's list never grows past
/// the room it reserves, and giving a block back never allocates).
constexpr size_t kMinSize = 16 * 1024;

/// A block of `size` (>= kMinSize) bytes to read into: a cached one of that size when
/// one is free, else a new one; nullptr when memory is out.
Block *take(size_t size);
char *data(Block *block);
/// Appends the block's first `len` bytes to `buf` by reference.  False
/// (the block is back in the cache) when libevent could not allocate.
bool hand_over(Block *block, size_t len, evbuffer *buf);
/// Returns a block that received nothing.
void give_back(Block *block);

} // namespace twinwire::read_blocks
