// SPDX-License-Identifier: MIT
// rdma_cm ids are destroyed on a thread of their own.  rdma_destroy_id can
// block in the kernel for good: Linux's cm_destroy_id waits, with no end,
// for a reference that a lost MAD send holds.  Seen in the SoftRoCE guest
// (Linux 6.1) after link flaps: a connection in DREQ_SENT, the kernel
// logging "cm_destroy_id_wait_timeout ... refcnt=1" every 10 s.  On a loop
// thread that stalls every connection of the loop and its listeners; here
// it holds only this thread (and that one id).
#pragma once

#include <rdma/rdma_cma.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace twrdma {

class IdReaper {
public:
    IdReaper() = default;
    /// Waits a bounded time for the ids queued; a destroy stuck in the
    /// kernel is left behind (its thread detached, the plugin kept mapped).
    ~IdReaper();
    IdReaper(const IdReaper &) = delete;
    IdReaper &operator=(const IdReaper &) = delete;

    /// Destroy `id` soon, off the calling thread.  Its context is cleared
    /// first: an event still queued for it finds no owner.  Any thread.
    void destroy(rdma_cm_id *id);
    /// Wait until no id of `channel` is queued or being destroyed, at most
    /// `bound`.  False when one still is (the channel must then stay).
    bool wait_channel(const rdma_event_channel *channel, std::chrono::milliseconds bound);
    /// "cm ids being destroyed: 1, the oldest for 42 s (stuck in the kernel)"; "" when none.
    std::string describe() const;

private:
    void run();

    mutable std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::deque<rdma_cm_id *> queue_;
    rdma_cm_id *running_ = nullptr;
    std::chrono::steady_clock::time_point running_since_{};
    std::thread thread_;
    bool stop_ = false;
};

} // namespace twrdma
