// SPDX-License-Identifier: MIT
// What makes MULTI/EXEC atomic with several loop threads: every command
// runs holding its loop's lane, EXEC holds every lane.  Each lane is on its
// own cache line and taken by one thread only, so ordinary commands never
// contend (one uncontended mutex, tens of nanoseconds) and pay nothing for
// transactions they do not use.
#pragma once

#include <cstddef>
#include <mutex>

namespace kvd {

class TransactionGate {
public:
    static constexpr size_t kLanes = 16;

    /// The lane of loop `index` (loops past kLanes share lanes).
    std::mutex &lane(size_t index) { return lanes_[index % kLanes].mutex; }
    void lock_all()
    {
        for (Lane &l : lanes_) l.mutex.lock();
    }
    void unlock_all()
    {
        for (size_t i = kLanes; i-- > 0;) lanes_[i].mutex.unlock();
    }

private:
    struct alignas(64) Lane {
        std::mutex mutex;
    };
    Lane lanes_[kLanes];
};

} // namespace kvd
