// SPDX-License-Identifier: MIT
#include "pool.hpp"

#include "counters.hpp"
#include "report.hpp"

#include <twinwire/errors.h>

#include <sys/mman.h>

#include <cerrno>

namespace twrdma {

Pool::Pool(Device &device, const Settings &settings, TransportCounters &counters)
    : device_(device), settings_(settings), counters_(counters), block_size_(settings.block_size())
{
    size_t blocks = settings.pool_size / block_size_;
    if (blocks == 0) blocks = 1;
    slab_bytes_ = blocks * block_size_;
}

Pool::~Pool()
{
    // Called when every QP of the loop is destroyed: no peer can reach the
    // memory any more, quarantined blocks included.
    size_t total = 0;
    for (auto &b : blocks_) total += b.size();
    counters_.registered_in_use -= static_cast<int64_t>((total - free_.size()) * block_size_);
    counters_.quarantined_bytes -= static_cast<int64_t>(quarantined_.size() * block_size_);
    for (auto &s : slabs_) {
        if (s.mr) ibv_dereg_mr(s.mr);
        if (s.base) munmap(s.base, s.len);
        counters_.registered_bytes -= static_cast<int64_t>(s.len);
    }
}

int Pool::prime(std::string *why) { return slabs_.empty() ? grow(why) : 0; }

int Pool::grow(std::string *why)
{
    size_t have = slabs_.size() * slab_bytes_;
    if (have + slab_bytes_ > settings_.pool_max) {
        *why = format("registered pool of %s on %s is exhausted (rdma.pool_max = %s, %s per connection)",
                      human_bytes(have).c_str(), device_.name.c_str(), human_bytes(settings_.pool_max).c_str(),
                      human_bytes(block_size_).c_str());
        return -ENOBUFS;
    }
    Slab s;
    s.len = slab_bytes_;
    s.base = mmap(nullptr, s.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s.base == MAP_FAILED) {
        *why = call_failed("mmap (registered pool slab)", errno);
        return -ENOMEM;
    }
    // Registered memory must not be copied-on-write into a forked child.
    madvise(s.base, s.len, MADV_DONTFORK);
    s.mr = ibv_reg_mr(device_.pd, s.base, s.len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!s.mr) {
        int err = errno;
        munmap(s.base, s.len);
        *why = call_failed("ibv_reg_mr (registered pool slab)", err,
                           "RLIMIT_MEMLOCK reached or device out of memory regions; raise the limit or lower rdma.pool_max");
        return -ENOMEM;
    }
    slabs_.push_back(s);
    counters_.registered_bytes += static_cast<int64_t>(s.len);
    std::vector<Block> blocks(slab_bytes_ / block_size_);
    for (size_t i = 0; i < blocks.size(); ++i) {
        blocks[i].base = static_cast<uint8_t *>(s.base) + i * block_size_;
        blocks[i].lkey = s.mr->lkey;
        blocks[i].rkey = s.mr->rkey;
    }
    blocks_.push_back(std::move(blocks));
    auto &mine = blocks_.back();
    for (size_t i = mine.size(); i-- > 0;) free_.push_back(&mine[i]);
    return 0;
}

Block *Pool::take(uint64_t now_ns, std::string *why)
{
    release_due(now_ns);
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

void Pool::quarantine(Block *block, uint64_t release_ns)
{
    block->release_ns = release_ns;
    counters_.quarantined_bytes += block_size_;
    quarantined_.push_back(block);
}

void Pool::release_due(uint64_t now_ns)
{
    while (!quarantined_.empty() && quarantined_.front()->release_ns <= now_ns) {
        Block *b = quarantined_.front();
        quarantined_.pop_front();
        counters_.quarantined_bytes -= block_size_;
        give_back(b);
    }
}

} // namespace twrdma
