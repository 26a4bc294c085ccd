// SPDX-License-Identifier: MIT
// MEMORY USAGE: the bytes one key holds in kvd's own structures.
#pragma once

#include "key_table.hpp"

#include <cstddef>

namespace kvd {

/// An estimate of the heap bytes behind `item`: its entry with the key, its
/// slot in the table, its string or collection with every element's node
/// and bytes, each block rounded as glibc's malloc rounds it.  It measures
/// kvd's structures (std::deque, std::unordered_set, ...), not the encodings
/// redis-server would pick, so the figures differ from Redis' while the
/// ranking of keys by size holds.  Like Redis, a collection is measured on
/// its first `samples` elements and scaled to its size; 0 measures them all.
size_t memory_usage(const Item &item, size_t samples);

} // namespace kvd
