// SPDX-License-Identifier: MIT
// Registered memory of one (loop, device): slabs registered once, carved
// into equal per-connection blocks.  No ibv_reg_mr after a slab exists.
// Nothing is registered with remote access: a peer writes only through its
// connection's memory window (ring_grant.cpp), bound over a registration
// that covers exactly its ring.  A block whose window could not be
// withdrawn is retired, never reused.
//
// Slab layout: every block's receive ring first, each its own registration
// (MW_BIND, so that a window over it can never reach past the ring, even on
// a device that checks only the underlying registration's bounds), then
// every block's local part (TX ring, receive and control buffers) in one
// registration with local access only.
#pragma once

#include "devices.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace twrdma {

struct TransportCounters;

/// One connection's registered memory.
struct Block {
    uint8_t *ring = nullptr;   ///< receive ring (rdma.ring_size bytes)
    ibv_mr *ring_mr = nullptr; ///< exactly the ring; windows are bound over it
    uint8_t *local = nullptr;  ///< TX ring, then receive and control buffers
    uint32_t lkey = 0;         ///< of the local part
};

/// A ring of another size than the block's, for a connection whose stream
/// outgrew its block (ring_resize.cpp): its own mapping and registration
/// (MW_BIND, so a window over it never reaches past it; the TX side only
/// reads it locally).
struct SpareRing {
    uint8_t *mem = nullptr;
    size_t size = 0;
    ibv_mr *mr = nullptr;
    uint64_t freed_ns = 0; ///< when it came back (trim)
};

/// Whether the device binds type-2 memory windows (which twinwire needs).
bool device_has_type2_mw(const Device &dev);

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
    Block *take(std::string *why);
    /// Return a block that no peer can write any more.
    void give_back(Block *block);
    /// Keep a block out of use for good: a peer may still hold a valid rkey
    /// for it (its window could not be deallocated).  Counted as quarantined.
    void retire(Block *block);
    size_t block_size() const { return block_size_; }

    /// A registered ring of `size` bytes (a power of two), or nullptr: none
    /// is ready, and the next refill() registers one (so a connection that
    /// grows never waits for ibv_reg_mr on its data path).
    SpareRing *take_ring(size_t size);
    /// Back from a connection: no peer can write it any more.
    void give_ring(SpareRing *r, uint64_t now_ns);
    /// A ring a peer may still write (its windows could not be withdrawn).
    void retire_ring(SpareRing *r);
    /// Register the rings take_ring() missed, within rdma.pool_max less one
    /// slab while another slab would fit (slab_reserve()); called from the
    /// loop's tick, off the data path.  The first time it cannot, returns
    /// why (for the log); else "".
    std::string refill(uint64_t now_ns);
    /// Deregister spare rings unused for `idle_ns` (0: all of them), but
    /// keep the stock (below) unless idle_ns is 0.
    void trim(uint64_t now_ns, uint64_t idle_ns);

    /// Register `bytes` of local buffers now, within rdma.pool_max (the
    /// shared receive queues' buffers, srq.cpp: taken at connection setup,
    /// kept as long as the pool).  False with *why when it cannot.
    bool take_buffers(size_t bytes, uint8_t **mem, uint32_t *lkey, std::string *why);

private:
    int grow(std::string *why);
    /// Bytes of the next slab: rdma.pool_size for the first, an eighth of
    /// it after (so the registered total follows the connections closely).
    size_t next_slab_bytes() const;
    /// Bytes of rdma.pool_max that rings may not take: one slab while
    /// another fits beside the slabs, else 0.
    size_t slab_reserve() const;
    void drop_ring(SpareRing *r);
    /// Register a spare ring of `size` now; "" or why not.
    std::string add_ring(size_t size, uint64_t now_ns);
    /// Keep kStock rings of each first growth step registered (from
    /// prime() and refill()): a write or a lent buffer larger than the
    /// small first TX ring, or a busy connection's receive ring, gets one
    /// at once instead of waiting for a refill.
    void restock(uint64_t now_ns);
    static constexpr size_t kStock = 2;
    static constexpr size_t kStockSizes = 2; ///< at most: the two below
    std::vector<size_t> stock_sizes_;        ///< send_buffer_size * 4 and ring_size * 4, where growth allows them

    struct Slab {
        void *base = nullptr; ///< slab or buffers (take_buffers: no ring_mrs)
        size_t len = 0;
        ibv_mr *local_mr = nullptr;
        std::vector<ibv_mr *> ring_mrs;
    };
    static void release(Slab &s);
    Device &device_;
    const Settings &settings_;
    TransportCounters &counters_;
    size_t block_size_;
    size_t slab_bytes_;   ///< the first slab
    size_t growth_bytes_; ///< every later one
    std::vector<Slab> slabs_;
    std::vector<Slab> buffers_; ///< take_buffers()
    std::vector<Block *> free_;
    size_t retired_ = 0;
    std::vector<std::vector<Block>> blocks_; ///< per slab
    bool warned_exhausted_ = false;
    size_t registered_ = 0;          ///< slabs and rings
    std::vector<SpareRing *> spare_; ///< registered, free
    std::vector<size_t> wanted_;     ///< sizes take_ring missed
    size_t spare_in_use_ = 0;        ///< bytes of rings lent out
    size_t spare_retired_ = 0;       ///< bytes of rings retired
    bool warned_rings_ = false;
};

} // namespace twrdma
