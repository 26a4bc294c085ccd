// SPDX-License-Identifier: MIT
// The shared receive queues of one (loop, device).  Every receive a peer's
// SEND or WRITE_WITH_IMM consumes comes from here, not from a queue of its
// connection: an idle connection holds no receive buffers, only its share
// of credits.  Each connection reserves rdma.recv_depth entries (the
// credits its peer holds), so the receives posted always cover every credit
// handed out and no sender meets RNR.  A buffer is reposted as soon as its
// completion is read.  Buffers come from the pool in chunks registered when
// the reservations outgrow them (connection setup, never the data path),
// and stay posted for later connections.
#pragma once

#include "devices.hpp"

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

namespace twrdma {

class Pool;
struct TransportCounters;

class SharedReceives {
public:
    SharedReceives(Device &device, Pool &pool, TransportCounters &counters);
    ~SharedReceives();
    SharedReceives(const SharedReceives &) = delete;
    SharedReceives &operator=(const SharedReceives &) = delete;

    /// Reserve `entries` receives for a new QP; the queue to attach it to
    /// (its index in *slot), or nullptr with *why.
    ibv_srq *reserve(uint32_t entries, int *slot, std::string *why);
    /// The QP of that reservation is destroyed.
    void release(int slot, uint32_t entries);
    /// The buffer a receive completion filled (wr_id as posted).
    const uint8_t *buffer(uint64_t wr_id) const;
    /// Post it again.  0 or a negative errno.
    int repost(uint64_t wr_id);
    /// Receives posted in all queues, and how many are reserved.
    uint64_t posted() const;
    uint64_t reserved() const;
    size_t queues() const { return slots_.size(); }

private:
    struct Chunk {
        uint8_t *mem = nullptr;
        uint32_t lkey = 0;
    };
    struct Slot {
        ibv_srq *srq = nullptr;
        uint32_t capacity = 0; ///< receives it may hold (max_wr as granted)
        uint32_t reserved = 0;
        std::vector<Chunk> chunks; ///< kChunkEntries buffers each, all posted
    };
    int add_chunk(Slot &s, uint32_t slot_index, std::string *why);
    int post(Slot &s, uint32_t slot_index, uint32_t index);

    Device &device_;
    Pool &pool_;
    TransportCounters &counters_;
    std::vector<Slot> slots_;
};

} // namespace twrdma
