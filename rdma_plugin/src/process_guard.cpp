// SPDX-License-Identifier: MIT
#include "process_guard.hpp"

#include "report.hpp"

#include <twinwire/errors.h>

#include <linux/capability.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace twrdma {

namespace {
std::atomic<pid_t> owner_pid{0};
std::atomic<bool> child_flag{false};
std::once_flag atfork_once;

void mark_child() { child_flag.store(true); }
} // namespace

void fork_guard_arm()
{
    std::call_once(atfork_once, [] { pthread_atfork(nullptr, nullptr, mark_child); });
    owner_pid.store(getpid());
    child_flag.store(false);
}

bool in_forked_child()
{
    pid_t owner = owner_pid.load();
    return child_flag.load() || (owner != 0 && owner != getpid());
}

bool forked_flag() { return child_flag.load(std::memory_order_relaxed); }

const char *fork_message()
{
    return "RDMA objects do not survive fork(): this process is a child of the one that initialised the RDMA "
           "transport; initialise twinwire after daemonising (after fork), not before";
}

bool has_ipc_lock_capability()
{
    __user_cap_header_struct hdr{};
    __user_cap_data_struct data[2]{};
    hdr.version = _LINUX_CAPABILITY_VERSION_3;
    hdr.pid = 0;
    if (syscall(SYS_capget, &hdr, data) != 0) return false;
    return (data[CAP_IPC_LOCK / 32].effective >> (CAP_IPC_LOCK % 32)) & 1u;
}

size_t memlock_limit()
{
    if (has_ipc_lock_capability()) return SIZE_MAX;
    rlimit rl{};
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
    return static_cast<size_t>(rl.rlim_cur);
}

bool fit_pool_to_memlock(size_t per_connection, size_t queues, size_t *pool_size, size_t *pool_max, std::string *note)
{
    const size_t limit = memlock_limit();
    // Fits, or too small for even a few connections (check_memlock refuses).
    if (limit == SIZE_MAX || limit >= *pool_max + queues || limit < queues + 4 * per_connection) return false;
    const size_t page = 4096;
    const size_t room = (limit - queues) / page * page;
    const size_t start = std::min(*pool_size, std::max(per_connection, room * 3 / 4 / page * page));
    *note = format("RLIMIT_MEMLOCK is %llu KiB, less than rdma.pool_max (%s) plus queues: the pool starts at %s and "
                   "grows to %s per event-loop thread and device, room for %zu idle connections (%s each); past it "
                   "new connections are refused with the reason; for the configured pool: LimitMEMLOCK=infinity in "
                   "the systemd unit, `ulimit -l unlimited`, or CAP_IPC_LOCK",
                   static_cast<unsigned long long>(limit / 1024), human_bytes(*pool_max).c_str(),
                   human_bytes(start).c_str(), human_bytes(room).c_str(), room / per_connection,
                   per_connection % 1024 ? format("%.1f KiB", double(per_connection) / 1024).c_str()
                                         : human_bytes(per_connection).c_str());
    *pool_size = start;
    *pool_max = room;
    return true;
}

int check_memlock(size_t at_start, size_t can_grow_to, std::string *why, std::string *warning)
{
    if (has_ipc_lock_capability()) return 0;
    rlimit rl{};
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
    if (rl.rlim_cur >= can_grow_to) return 0;
    // What the configured pool grows to, not only its first slab: a limit
    // sized to the start makes every connection past the first slab fail.
    const unsigned long long grow_kib = (can_grow_to + 1023) / 1024;
    const std::string figures =
        format("the RDMA transport registers %s at start (rdma.pool_size plus queues) and its pool can grow to %s "
               "per event-loop thread and device (rdma.pool_max plus queues)",
               human_bytes(at_start).c_str(), human_bytes(can_grow_to).c_str());
    const std::string fix =
        format("LimitMEMLOCK=infinity in the systemd unit, or `ulimit -l unlimited` (at least `ulimit -l %llu` per "
               "thread and device) or a memlock line in /etc/security/limits.conf; or grant CAP_IPC_LOCK",
               grow_kib);
    const unsigned long long limit_kib = static_cast<unsigned long long>(rl.rlim_cur / 1024);
    if (rl.rlim_cur >= at_start) {
        *warning = format("RLIMIT_MEMLOCK is %llu KiB: %s, so new connections will be refused once it is reached; "
                          "fix: %s; or lower rdma.pool_max",
                          limit_kib, figures.c_str(), fix.c_str());
        return 0;
    }
    *why = format("RLIMIT_MEMLOCK is %llu KiB but %s; fix: %s; or lower rdma.pool_size and rdma.pool_max", limit_kib,
                  figures.c_str(), fix.c_str());
    return -TW_EMEMLOCK;
}

} // namespace twrdma
