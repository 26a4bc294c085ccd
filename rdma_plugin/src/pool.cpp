// SPDX-License-Identifier: MIT
#include "pool.hpp"

#include "counters.hpp"
#include "report.hpp"

#include <twinwire/errors.h>

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>

namespace twrdma {

Pool::Pool(Device &device, const Settings &settings, TransportCounters &counters)
    : device_(device), settings_(settings), counters_(counters), block_size_(settings.block_size())
{
    size_t blocks = settings.pool_size / block_size_;
    if (blocks == 0) blocks = 1;
    slab_bytes_ = blocks * block_size_;
    growth_bytes_ = std::max<size_t>(1, blocks / 8) * block_size_;
    if (settings.send_buffer_size * 4 <= settings.send_buffer_max)
        stock_sizes_.push_back(settings.send_buffer_size * 4);
    if (settings.ring_size * 4 <= settings.ring_max && settings.ring_size != settings.send_buffer_size)
        stock_sizes_.push_back(settings.ring_size * 4);
}

size_t Pool::next_slab_bytes() const { return slabs_.empty() ? slab_bytes_ : growth_bytes_; }

Pool::~Pool()
{
    // Called when every QP of the loop is destroyed: no peer can reach the
    // memory any more, retired blocks included.
    size_t total = 0;
    for (auto &b : blocks_) total += b.size();
    counters_.registered_in_use -= static_cast<int64_t>((total - free_.size() - retired_) * block_size_);
    counters_.quarantined_bytes -= static_cast<int64_t>(retired_ * block_size_);
    // Rings still lent or retired go with their registration here too.
    counters_.registered_in_use -= static_cast<int64_t>(spare_in_use_);
    counters_.quarantined_bytes -= static_cast<int64_t>(spare_retired_);
    counters_.registered_bytes -= static_cast<int64_t>(spare_in_use_ + spare_retired_);
    trim(0, 0);
    for (auto *list : {&slabs_, &buffers_})
        for (auto &s : *list) {
            release(s);
            counters_.registered_bytes -= static_cast<int64_t>(s.len);
        }
}

void Pool::release(Slab &s)
{
    for (ibv_mr *mr : s.ring_mrs) ibv_dereg_mr(mr);
    if (s.local_mr) ibv_dereg_mr(s.local_mr);
    if (s.base) munmap(s.base, s.len);
}

int Pool::prime(std::string *why)
{
    if (!slabs_.empty()) return 0;
    int rc = grow(why);
    if (rc == 0) restock(0);
    return rc;
}

void Pool::restock(uint64_t now_ns)
{
    for (size_t size : stock_sizes_) {
        size_t have = 0;
        for (const SpareRing *r : spare_) have += r->size == size;
        // Quietly: the stock is a head start, a full pool is reported by refill.
        while (have++ < kStock && registered_ + size + slab_reserve() <= settings_.pool_max)
            if (!add_ring(size, now_ns).empty()) return;
    }
}

int Pool::grow(std::string *why)
{
    size_t have = registered_;
    const size_t bytes = next_slab_bytes();
    if (have + bytes > settings_.pool_max) {
        *why = format("registered pool of %s on %s is exhausted (rdma.pool_max = %s, %s per connection)",
                      human_bytes(have).c_str(), device_.name.c_str(), human_bytes(settings_.pool_max).c_str(),
                      human_bytes(block_size_).c_str());
        return -ENOBUFS;
    }
    const char *hint = "RLIMIT_MEMLOCK reached or device out of memory regions; raise the limit or lower rdma.pool_max";
    Slab s;
    s.len = bytes;
    s.base = mmap(nullptr, s.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s.base == MAP_FAILED) {
        *why = call_failed("mmap (registered pool slab)", errno);
        return -ENOMEM;
    }
    // Registered memory must not be copied-on-write into a forked child.
    madvise(s.base, s.len, MADV_DONTFORK);
    const size_t count = bytes / block_size_;
    const size_t ring = settings_.ring_size;
    const size_t local = block_size_ - ring; // rings first: ring_size is a multiple of the page size
    auto *rings = static_cast<uint8_t *>(s.base);
    uint8_t *locals = rings + count * ring;
    s.local_mr = ibv_reg_mr(device_.pd, locals, count * local, IBV_ACCESS_LOCAL_WRITE);
    if (!s.local_mr) {
        int err = errno;
        release(s);
        *why = call_failed("ibv_reg_mr (registered pool: TX rings and buffers)", err, hint);
        return -ENOMEM;
    }
    // The rings need no local access flag of their own (the CPU reads them);
    // MW_BIND lets a connection bind its window there.
    int ring_access = IBV_ACCESS_LOCAL_WRITE | (device_has_type2_mw(device_) ? IBV_ACCESS_MW_BIND : 0);
    for (size_t i = 0; i < count; ++i) {
        ibv_mr *mr = ibv_reg_mr(device_.pd, rings + i * ring, ring, ring_access);
        if (!mr) {
            int err = errno;
            release(s);
            *why = call_failed("ibv_reg_mr (registered pool: receive ring)", err, hint);
            return -ENOMEM;
        }
        s.ring_mrs.push_back(mr);
    }
    std::vector<Block> blocks(count);
    for (size_t i = 0; i < count; ++i) {
        blocks[i].ring = rings + i * ring;
        blocks[i].ring_mr = s.ring_mrs[i];
        blocks[i].local = locals + i * local;
        blocks[i].lkey = s.local_mr->lkey;
    }
    slabs_.push_back(std::move(s));
    counters_.registered_bytes += static_cast<int64_t>(bytes);
    registered_ += bytes;
    blocks_.push_back(std::move(blocks));
    auto &mine = blocks_.back();
    for (size_t i = mine.size(); i-- > 0;) free_.push_back(&mine[i]);
    return 0;
}

Block *Pool::take(std::string *why)
{
    if (free_.empty() && grow(why) != 0) {
        counters_.pool_exhausted += 1;
        return nullptr;
    }
    Block *b = free_.back();
    free_.pop_back();
    counters_.registered_in_use += block_size_;
    return b;
}

void Pool::give_back(Block *block)
{
    counters_.registered_in_use -= block_size_;
    free_.push_back(block);
}

void Pool::retire(Block *block)
{
    counters_.registered_in_use -= block_size_;
    counters_.quarantined_bytes += block_size_;
    retired_ += 1;
    (void)block; // never handed out again
}

SpareRing *Pool::take_ring(size_t size)
{
    for (size_t i = 0; i < spare_.size(); ++i) {
        if (spare_[i]->size != size) continue;
        SpareRing *r = spare_[i];
        spare_.erase(spare_.begin() + static_cast<std::ptrdiff_t>(i));
        spare_in_use_ += size;
        counters_.registered_in_use += static_cast<int64_t>(size);
        return r;
    }
    if (wanted_.size() < 64) wanted_.push_back(size);
    return nullptr;
}

void Pool::give_ring(SpareRing *r, uint64_t now_ns)
{
    spare_in_use_ -= r->size;
    counters_.registered_in_use -= static_cast<int64_t>(r->size);
    r->freed_ns = now_ns;
    spare_.push_back(r);
}

void Pool::retire_ring(SpareRing *r)
{
    // Never handed out again, never deregistered: a peer may hold its key.
    spare_in_use_ -= r->size;
    spare_retired_ += r->size;
    counters_.registered_in_use -= static_cast<int64_t>(r->size);
    counters_.quarantined_bytes += static_cast<int64_t>(r->size);
}

std::string Pool::refill(uint64_t now_ns)
{
    restock(now_ns);
    std::string report;
    std::vector<size_t> wanted;
    wanted.swap(wanted_);
    for (size_t size : wanted) {
        bool ready = false;
        for (SpareRing *r : spare_) ready = ready || r->size == size;
        if (ready) continue;
        std::string why;
        const size_t reserve = slab_reserve();
        if (registered_ + size + reserve > settings_.pool_max) {
            why = format("rdma.pool_max = %s on %s is reached (%s registered, %s kept for new connections)",
                         human_bytes(settings_.pool_max).c_str(), device_.name.c_str(),
                         human_bytes(registered_).c_str(), human_bytes(reserve).c_str());
        } else {
            why = add_ring(size, now_ns);
            if (why.empty()) continue;
        }
        counters_.pool_exhausted += 1;
        // Once per pool: connections keep the rings they have, which is
        // backpressure, not an error.
        if (!warned_rings_) {
            warned_rings_ = true;
            report = "connections keep the ring sizes they have: " + why;
        }
    }
    return report;
}

std::string Pool::add_ring(size_t size, uint64_t now_ns)
{
    void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return call_failed("mmap (ring for a growing connection)", errno);
    madvise(p, size, MADV_DONTFORK);
    int access = IBV_ACCESS_LOCAL_WRITE | (device_has_type2_mw(device_) ? IBV_ACCESS_MW_BIND : 0);
    ibv_mr *mr = ibv_reg_mr(device_.pd, p, size, access);
    if (!mr) {
        int err = errno;
        munmap(p, size);
        return call_failed("ibv_reg_mr (ring for a growing connection)", err,
                           "RLIMIT_MEMLOCK reached or device out of memory regions; raise the limit or lower "
                           "rdma.ring_max / rdma.send_buffer_max");
    }
    auto *r = new SpareRing;
    r->mem = static_cast<uint8_t *>(p);
    r->size = size;
    r->mr = mr;
    r->freed_ns = now_ns; // trimmed only after an idle period unused
    spare_.push_back(r);
    registered_ += size;
    counters_.registered_bytes += static_cast<int64_t>(size);
    return "";
}

size_t Pool::slab_reserve() const
{
    // Rings never take the room of the next slab while pool_max has room
    // for one: grown rings must not lock new connections out.
    size_t slabs = 0;
    for (const Slab &s : slabs_) slabs += s.len;
    return slabs + next_slab_bytes() <= settings_.pool_max ? next_slab_bytes() : 0;
}

bool Pool::take_buffers(size_t bytes, uint8_t **mem, uint32_t *lkey, std::string *why)
{
    if (registered_ + bytes > settings_.pool_max) {
        *why = format("registered pool of %s on %s is exhausted (rdma.pool_max = %s): no room for %s of receive "
                      "buffers",
                      human_bytes(registered_).c_str(), device_.name.c_str(), human_bytes(settings_.pool_max).c_str(),
                      human_bytes(bytes).c_str());
        return false;
    }
    Slab s;
    s.len = bytes;
    s.base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s.base == MAP_FAILED) {
        s.base = nullptr;
        *why = call_failed("mmap (receive buffers)", errno);
        return false;
    }
    madvise(s.base, bytes, MADV_DONTFORK);
    s.local_mr = ibv_reg_mr(device_.pd, s.base, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (!s.local_mr) {
        int err = errno;
        release(s);
        *why = call_failed("ibv_reg_mr (shared receive buffers)", err,
                           "RLIMIT_MEMLOCK reached or device out of memory regions; raise the limit");
        return false;
    }
    *mem = static_cast<uint8_t *>(s.base);
    *lkey = s.local_mr->lkey;
    buffers_.push_back(s);
    registered_ += bytes;
    counters_.registered_bytes += static_cast<int64_t>(bytes);
    return true;
}

void Pool::drop_ring(SpareRing *r)
{
    ibv_dereg_mr(r->mr);
    munmap(r->mem, r->size);
    registered_ -= r->size;
    counters_.registered_bytes -= static_cast<int64_t>(r->size);
    delete r;
}

void Pool::trim(uint64_t now_ns, uint64_t idle_ns)
{
    size_t kept[kStockSizes] = {};
    for (size_t i = spare_.size(); i-- > 0;) {
        SpareRing *r = spare_[i];
        if (idle_ns && now_ns - r->freed_ns < idle_ns) continue;
        auto k =
            static_cast<size_t>(std::find(stock_sizes_.begin(), stock_sizes_.end(), r->size) - stock_sizes_.begin());
        if (idle_ns && k < stock_sizes_.size() && kept[k]++ < kStock) continue;
        spare_.erase(spare_.begin() + static_cast<std::ptrdiff_t>(i));
        drop_ring(r);
    }
}

bool device_has_type2_mw(const Device &dev)
{
    return (dev.attr.device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) != 0;
}

} // namespace twrdma
