// SPDX-License-Identifier: MIT
// Shared pieces of the fault matrix (fault-matrix: RDMA in the guest, TCP on
// the host with --tcp): the seed, the lowered liveness settings, the bound
// on every wait.
#pragma once

#include "rdma_test.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace twinwire::rdmatest {

/// No wait in the matrix lasts longer: a hang is a failure, not a stall.
/// dead_peer_ms (6 s) plus the emulated guest's slowness, with room.
constexpr std::chrono::milliseconds kFaultBound{60000};

/// TW_FAULT_SEED when set, else a fresh one; printed either way so that a
/// failing run can be repeated.
uint64_t fault_seed();
/// The transport under test with dead-peer detection lowered
/// (rdma.keepalive_ms = 300, rdma.dead_peer_ms = 6000: a silent peer is
/// noticed in seconds, yet a live one in a loaded emulated guest is not
/// mistaken for dead; nothing for TCP).
void use_fault_settings();
/// The same for a `--child echo` peer: "tcp" or the rdma.* arguments.
std::vector<std::string> fault_child_settings();

} // namespace twinwire::rdmatest
