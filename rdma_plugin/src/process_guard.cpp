// SPDX-License-Identifier: MIT
#include "process_guard.hpp"

#include "report.hpp"

#include <twinwire/errors.h>

#include <linux/capability.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
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

int check_memlock(size_t need, std::string *why)
{
    if (has_ipc_lock_capability()) return 0;
    rlimit rl{};
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
    if (rl.rlim_cur >= need) return 0;
    unsigned long long need_kib = (need + 1023) / 1024;
    *why = format("RLIMIT_MEMLOCK is %llu KiB but the RDMA transport needs at least %llu KiB of locked memory "
                  "(rdma.pool_size plus queues); fix: raise it (`ulimit -l %llu` in the shell, LimitMEMLOCK=%llu "
                  "in the systemd unit, or a memlock line in /etc/security/limits.conf), grant CAP_IPC_LOCK, or "
                  "lower rdma.pool_size",
                  static_cast<unsigned long long>(rl.rlim_cur / 1024), need_kib, need_kib, need_kib * 1024);
    return -TW_EMEMLOCK;
}

} // namespace twrdma
