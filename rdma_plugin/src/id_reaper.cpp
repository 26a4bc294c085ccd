// SPDX-License-Identifier: MIT
#include "id_reaper.hpp"

#include "report.hpp"

#include <dlfcn.h>

#include <algorithm>

namespace twrdma {

namespace {

/// Keep this plugin mapped for good: a thread left inside it may return.
void pin_plugin()
{
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&pin_plugin), &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

} // namespace

void IdReaper::destroy(rdma_cm_id *id)
{
    if (!id) return;
    id->context = nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(id);
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    wake_.notify_one();
}

void IdReaper::run()
{
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return; // stop_
        running_ = queue_.front();
        queue_.pop_front();
        running_since_ = std::chrono::steady_clock::now();
        rdma_cm_id *id = running_;
        lock.unlock();
        rdma_destroy_id(id);
        lock.lock();
        running_ = nullptr;
        idle_.notify_all();
    }
}

bool IdReaper::wait_channel(const rdma_event_channel *channel, std::chrono::milliseconds bound)
{
    std::unique_lock<std::mutex> lock(mutex_);
    return idle_.wait_for(lock, bound, [&] {
        if (running_ && running_->channel == channel) return false;
        return std::none_of(queue_.begin(), queue_.end(), [&](const rdma_cm_id *id) { return id->channel == channel; });
    });
}

std::string IdReaper::describe() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = queue_.size() + (running_ ? 1 : 0);
    if (n == 0) return "";
    auto for_s =
        running_ ? std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - running_since_)
                       .count()
                 : 0;
    return format("cm ids being destroyed: %zu, the oldest for %lld s%s\n", n, static_cast<long long>(for_s),
                  for_s >= 10 ? " (stuck in the kernel's cm_destroy_id; see docs/rdma-design.md, section 6)" : "");
}

IdReaper::~IdReaper()
{
    std::unique_lock<std::mutex> lock(mutex_);
    stop_ = true;
    wake_.notify_one();
    bool drained = idle_.wait_for(lock, std::chrono::seconds(5), [this] { return queue_.empty() && !running_; });
    lock.unlock();
    if (!thread_.joinable()) return;
    if (drained) {
        thread_.join();
        return;
    }
    // Stuck in the kernel: leave it; the process exits without it.
    pin_plugin();
    thread_.detach();
}

} // namespace twrdma
