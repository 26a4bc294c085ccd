// SPDX-License-Identifier: MIT
// kvd.maxclients against the open-file limit: like redis-server, the daemon
// raises its soft RLIMIT_NOFILE as far as it needs (and may), and serves no
// more clients than the limit leaves descriptors for, so a client beyond
// maxclients always gets an accept and an error reply, never a hang.
#pragma once

#include <cstddef>
#include <string>

namespace kvd {

struct ClientLimit {
    size_t maxclients;  ///< what the daemon will serve (<= wanted; 0: not even one)
    std::string notice; ///< "" when `wanted` fits; else why it was lowered, for the log
};

/// Descriptors the daemon keeps for itself beside its clients: listeners,
/// each loop's epoll and wake-up descriptors, the log, the pidfile, the
/// transports' own (RDMA event channels) and the refusal of one client
/// beyond maxclients.
size_t reserved_descriptors(size_t loops);

/// Raise the soft open-file limit towards `wanted + reserved` (never past
/// the hard limit) and return how many clients fit.
ClientLimit fit_clients_to_fd_limit(size_t wanted, size_t reserved);

} // namespace kvd
