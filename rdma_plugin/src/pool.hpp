// SPDX-License-Identifier: MIT
// Registered memory of one (loop, device): slabs registered once, carved into
// equal per-connection blocks.  No ibv_reg_mr after a slab exists; a block
// whose rkey a failed peer may still use waits in quarantine.
#pragma once

#include "devices.hpp"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace twrdma {

struct TransportCounters;

/// One connection's registered memory.
struct Block {
    uint8_t *base = nullptr;
    uint32_t lkey = 0;
    uint32_t rkey = 0;
    uint64_t release_ns = 0; ///< quarantine: usable again after this time
};

class Pool {
public:
    Pool(Device &device, const Settings &settings, TransportCounters &counters);
    ~Pool();
    Pool(const Pool &) = delete;
    Pool &operator=(const Pool &) = delete;

    /// Register the first slab.  0 or a negative code with *why.
    int prime(std::string *why);
    /// A free block, growing by a slab when allowed; nullptr with *why when
    /// the pool is exhausted (counted).
    Block *take(uint64_t now_ns, std::string *why);
    /// Return a block that no peer can write any more.
    void give_back(Block *block);
    /// Return a block that a peer may still write until `release_ns`.
    void quarantine(Block *block, uint64_t release_ns);
    /// Move quarantined blocks whose time has come back to the free list.
    void release_due(uint64_t now_ns);
    bool has_quarantine() const { return !quarantined_.empty(); }
    size_t block_size() const { return block_size_; }

private:
    int grow(std::string *why);

    struct Slab {
        void *base = nullptr;
        size_t len = 0;
        ibv_mr *mr = nullptr;
    };
    Device &device_;
    const Settings &settings_;
    TransportCounters &counters_;
    size_t block_size_;
    size_t slab_bytes_;
    std::vector<Slab> slabs_;
    std::vector<Block *> free_;
    std::deque<Block *> quarantined_; ///< in release order
    std::vector<std::vector<Block>> blocks_; ///< per slab
    bool warned_exhausted_ = false;
};

} // namespace twrdma
