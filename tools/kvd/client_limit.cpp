// SPDX-License-Identifier: MIT
#include "client_limit.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kvd {

size_t reserved_descriptors(size_t loops) { return 32 + 4 * loops; }

ClientLimit fit_clients_to_fd_limit(size_t wanted, size_t reserved)
{
    struct rlimit lim {};
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return {wanted, std::string("getrlimit(RLIMIT_NOFILE) failed: ") + std::strerror(errno) +
                            "; kvd.maxclients left as configured"};
    const rlim_t needed = static_cast<rlim_t>(wanted + reserved);
    std::string raise_error;
    if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < needed) {
        struct rlimit raised = lim;
        raised.rlim_cur = lim.rlim_max == RLIM_INFINITY ? needed : std::min(needed, lim.rlim_max);
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
        else raise_error = std::string(" (raising it failed: ") + std::strerror(errno) + ")";
    }
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= needed) return {wanted, {}};
    const size_t fit = lim.rlim_cur > reserved ? static_cast<size_t>(lim.rlim_cur) - reserved : 0;
    return {fit, "kvd.maxclients lowered from " + std::to_string(wanted) + " to " + std::to_string(fit) +
                     ": the open file limit is " + std::to_string(lim.rlim_cur) + " (hard limit " +
                     (lim.rlim_max == RLIM_INFINITY ? std::string("unlimited") : std::to_string(lim.rlim_max)) + ")" +
                     raise_error + " and " + std::to_string(reserved) +
                     " descriptors stay reserved for the daemon; raise it with ulimit -n or LimitNOFILE="};
}

} // namespace kvd
