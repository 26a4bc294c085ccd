// SPDX-License-Identifier: MIT
#include "srq.hpp"

#include "core.hpp"
#include "pool.hpp"
#include "report.hpp"

#include <algorithm>
#include <cerrno>

namespace twrdma {

namespace {

/// Receives per queue at most: 1024 connections at the default
/// rdma.recv_depth.  A device may give fewer (max_srq_wr).
constexpr uint32_t kSlotEntries = 16384;
/// Receives registered and posted at a time (16 KiB of buffers: small
/// beside the smallest pools, 16 connections at the default depth).
constexpr uint32_t kChunkEntries = 256;

/// wr_id of receive buffer `index` of queue `slot` (the serial field
/// names the queue: a shared receive has no connection until it completes).
uint64_t recv_wr_id(uint32_t slot, uint32_t index) { return make_wr_id(slot, WrKind::Recv, index); }

} // namespace

SharedReceives::SharedReceives(Device &device, Pool &pool, TransportCounters &counters)
    : device_(device), pool_(pool), counters_(counters)
{
}

SharedReceives::~SharedReceives()
{
    // Every QP on these queues is destroyed; the buffers go with the pool.
    for (Slot &s : slots_) {
        counters_.registered_in_use -= int64_t(s.reserved) * int64_t(kRecvBufSize);
        if (s.srq) ibv_destroy_srq(s.srq);
    }
}

ibv_srq *SharedReceives::reserve(uint32_t entries, int *slot, std::string *why)
{
    size_t i = 0;
    while (i < slots_.size() && slots_[i].capacity - slots_[i].reserved < entries) ++i;
    if (i == slots_.size()) {
        uint32_t max_wr = device_.attr.max_srq_wr > 0 ? static_cast<uint32_t>(device_.attr.max_srq_wr) : 0;
        ibv_srq_init_attr attr{};
        attr.attr.max_wr = std::min(max_wr, kSlotEntries);
        attr.attr.max_sge = 1;
        if (attr.attr.max_wr < entries) {
            *why = format("RDMA device %s holds %u receives in a shared receive queue, a connection needs %u; hint: "
                          "lower rdma.recv_depth",
                          device_.name.c_str(), max_wr, entries);
            return nullptr;
        }
        Slot s;
        s.srq = ibv_create_srq(device_.pd, &attr);
        if (!s.srq) {
            *why = call_failed("ibv_create_srq", errno, "the device's shared receive queues; lower rdma.recv_depth");
            return nullptr;
        }
        s.capacity = attr.attr.max_wr; // as granted (it may be more than asked)
        slots_.push_back(std::move(s));
    }
    Slot &s = slots_[i];
    // Posted receives cover every credit handed out on this queue.
    uint64_t posted = uint64_t(s.chunks.size()) * kChunkEntries;
    while (posted < uint64_t(s.reserved) + entries && posted < s.capacity) {
        int rc = add_chunk(s, static_cast<uint32_t>(i), why);
        if (rc) return nullptr;
        posted += kChunkEntries;
    }
    if (posted < uint64_t(s.reserved) + entries) {
        *why = format("shared receive queue of %s: %llu receives posted, %u more needed", device_.name.c_str(),
                      static_cast<unsigned long long>(posted), entries);
        return nullptr;
    }
    s.reserved += entries;
    counters_.registered_in_use += int64_t(entries) * int64_t(kRecvBufSize);
    *slot = static_cast<int>(i);
    return s.srq;
}

void SharedReceives::release(int slot, uint32_t entries)
{
    if (slot < 0 || static_cast<size_t>(slot) >= slots_.size()) return;
    slots_[static_cast<size_t>(slot)].reserved -= entries;
    counters_.registered_in_use -= int64_t(entries) * int64_t(kRecvBufSize);
}

int SharedReceives::add_chunk(Slot &s, uint32_t slot_index, std::string *why)
{
    // Never more than the queue holds: the last chunk may be partly posted.
    uint32_t first = static_cast<uint32_t>(s.chunks.size()) * kChunkEntries;
    uint32_t count = std::min(kChunkEntries, s.capacity - first);
    Chunk ch;
    if (!pool_.take_buffers(size_t(kChunkEntries) * kRecvBufSize, &ch.mem, &ch.lkey, why)) return -ENOBUFS;
    s.chunks.push_back(ch);
    for (uint32_t k = 0; k < count; ++k) {
        int rc = post(s, slot_index, first + k);
        if (rc) {
            *why = call_failed("ibv_post_srq_recv", -rc);
            return rc;
        }
    }
    return 0;
}

int SharedReceives::post(Slot &s, uint32_t slot_index, uint32_t index)
{
    const Chunk &ch = s.chunks[index / kChunkEntries];
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uint64_t>(ch.mem + size_t(index % kChunkEntries) * kRecvBufSize);
    sge.length = kRecvBufSize;
    sge.lkey = ch.lkey;
    ibv_recv_wr wr{};
    wr.wr_id = recv_wr_id(slot_index, index);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr *bad = nullptr;
    return -ibv_post_srq_recv(s.srq, &wr, &bad);
}

const uint8_t *SharedReceives::buffer(uint64_t wr_id) const
{
    uint32_t slot = static_cast<uint32_t>(wr_id >> 32);
    uint32_t index = static_cast<uint32_t>(wr_id & 0xffffff);
    const Chunk &ch = slots_[slot].chunks[index / kChunkEntries];
    return ch.mem + size_t(index % kChunkEntries) * kRecvBufSize;
}

int SharedReceives::repost(uint64_t wr_id)
{
    uint32_t slot = static_cast<uint32_t>(wr_id >> 32);
    if (slot >= slots_.size()) return -EINVAL;
    return post(slots_[slot], slot, static_cast<uint32_t>(wr_id & 0xffffff));
}

uint64_t SharedReceives::posted() const
{
    uint64_t n = 0;
    for (const Slot &s : slots_) n += std::min<uint64_t>(uint64_t(s.chunks.size()) * kChunkEntries, s.capacity);
    return n;
}

uint64_t SharedReceives::reserved() const
{
    uint64_t n = 0;
    for (const Slot &s : slots_) n += s.reserved;
    return n;
}

} // namespace twrdma
