// SPDX-License-Identifier: MIT
// fault-matrix: killed peers, connection storms, pool exhaustion and device
// removal.  In the SoftRoCE guest over RDMA (across the wire, or
// --one-device); on the host over the built-in TCP with --tcp (the cases
// tagged [tcp]).
#include "fault.hpp"

#include <cstdio>
#include <cstdlib>
#include <random>

namespace twinwire::rdmatest {

uint64_t fault_seed()
{
    static uint64_t seed = [] {
        const char *s = getenv("TW_FAULT_SEED");
        uint64_t v = s && *s ? std::strtoull(s, nullptr, 0) : std::random_device{}();
        fprintf(stderr, "fault-matrix: seed %llu (repeat with TW_FAULT_SEED=%llu)\n",
                static_cast<unsigned long long>(v), static_cast<unsigned long long>(v));
        return v;
    }();
    return seed;
}

void use_fault_settings() { use_settings({{"rdma.keepalive_ms", "300"}, {"rdma.dead_peer_ms", "6000"}}); }

std::vector<std::string> fault_child_settings()
{
    if (testing_tcp()) return {"tcp"};
    return {"rdma.keepalive_ms=300", "rdma.dead_peer_ms=6000"};
}

} // namespace twinwire::rdmatest

int main(int argc, char **argv) { return twinwire::rdmatest::run_suite(argc, argv); }
