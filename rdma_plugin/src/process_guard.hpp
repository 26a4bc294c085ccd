// SPDX-License-Identifier: MIT
// Process-level checks: fork detection and the locked-memory limit.
#pragma once

#include <cstddef>
#include <string>

namespace twrdma {

/// Remember this process as the one that owns RDMA objects (idempotent).
void fork_guard_arm();
/// True in a child forked after fork_guard_arm(): RDMA objects are unusable.
/// Compares the pid too (a child made by a raw clone() skips the atfork
/// handler), so it costs a getpid() syscall: for setup paths only.
bool in_forked_child();
/// The atfork child flag alone: one atomic load, for the data path.  fork()
/// sets it; in_forked_child() on connect/listen/accept/attach covers the rest.
bool forked_flag();
/// The one-line explanation given with -TW_EFORKED.
const char *fork_message();

/// True when the process may lock any amount of memory (CAP_IPC_LOCK).
bool has_ipc_lock_capability();
/// Bytes the process may lock: SIZE_MAX when unlimited or CAP_IPC_LOCK lifts the limit.
size_t memlock_limit();
/// When the limit is below `*pool_max` plus `queues` but holds the queues
/// and a few connections (`per_connection` bytes each), fit the pool to it:
/// it grows to the room the limit leaves, and starts at no more than three
/// quarters of it (the rest for rings that grow under load).  True with the
/// WARN line in *note.
bool fit_pool_to_memlock(size_t per_connection, size_t queues, size_t *pool_size, size_t *pool_max, std::string *note);
/// 0 when `at_start` bytes (the first slab of the pool, plus queues) can be
/// registered, else -TW_EMEMLOCK with the limit, what the pool needs at start
/// and can grow to (`can_grow_to` per loop and device) and the fix in *why.
/// When the start fits but the growth does not, returns 0 with that in *warning.
int check_memlock(size_t at_start, size_t can_grow_to, std::string *why, std::string *warning);

} // namespace twrdma
