// SPDX-License-Identifier: MIT
#include "read_blocks.hpp"

#include <event2/buffer.h>

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace twinwire::read_blocks {

struct Block {
    size_t size;
    // the bytes follow
};

namespace {

// As much as one event may read (connection.cpp's kMaxReadPerEvent): a
// streaming reader that drains what one event brought finds all of it here
// on the next.  Held for the life of the process, at most this much.
constexpr size_t kCacheBytes = 4u << 20;

// Released blocks may come back on any thread (a reader can move the bytes
// to a buffer of its own and free them elsewhere).
struct Cache {
    Cache() { free.reserve(kCacheBytes / kMinSize); }
    std::mutex mutex;
    std::vector<Block *> free;
    size_t bytes = 0;
};

Cache &cache()
{
    static Cache *c = new Cache; // never destroyed: blocks may come back during exit
    return *c;
}

void release(const void *, size_t, void *extra) { give_back(static_cast<Block *>(extra)); }

} // namespace

Block *take(size_t size)
{
    if (size < kMinSize) return nullptr;
    Cache &c = cache();
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        for (size_t i = c.free.size(); i-- > 0;) {
            Block *b = c.free[i];
            if (b->size != size) continue;
            c.free.erase(c.free.begin() + static_cast<std::ptrdiff_t>(i));
            c.bytes -= size;
            return b;
        }
    }
    void *p = std::malloc(sizeof(Block) + size);
    if (!p) return nullptr;
    return new (p) Block{size};
}

char *data(Block *block) { return reinterpret_cast<char *>(block + 1); }

bool hand_over(Block *block, size_t len, evbuffer *buf)
{
    if (evbuffer_add_reference(buf, data(block), len, release, block) == 0) return true;
    give_back(block);
    return false;
}

void give_back(Block *block)
{
    Cache &c = cache();
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        if (c.bytes + block->size <= kCacheBytes) {
            c.free.push_back(block);
            c.bytes += block->size;
            return;
        }
    }
    std::free(block);
}

} // namespace twinwire::read_blocks
