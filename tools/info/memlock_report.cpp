// SPDX-License-Identifier: MIT
// RDMA registers (pins) memory: RLIMIT_MEMLOCK bounds it unless the process
// holds CAP_IPC_LOCK.  Both decide whether the plugin can start.
#include "memlock_report.hpp"

#include <fstream>
#include <sys/resource.h>

namespace {

std::string limit_text(rlim_t v)
{
    if (v == RLIM_INFINITY) return "unlimited";
    if (v >= (1u << 20) && v % (1u << 20) == 0) return std::to_string(v >> 20) + " MiB";
    if (v >= (1u << 10) && v % (1u << 10) == 0) return std::to_string(v >> 10) + " KiB";
    return std::to_string(v) + " B";
}

// CAP_IPC_LOCK is capability 14; /proc/self/status has the effective set in hex.
bool has_ipc_lock()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.compare(0, 7, "CapEff:") == 0) return (std::stoull(line.substr(7), nullptr, 16) >> 14) & 1;
    return false;
}

} // namespace

std::string memlock_report()
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0) return "RLIMIT_MEMLOCK: unknown (getrlimit failed)";
    bool cap = has_ipc_lock();
    return "RLIMIT_MEMLOCK: soft " + limit_text(rl.rlim_cur) + ", hard " + limit_text(rl.rlim_max) +
           "; CAP_IPC_LOCK: " +
           (cap ? "yes (the limit does not apply)" : "no (the limit applies to registered memory)");
}
