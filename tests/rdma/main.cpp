// SPDX-License-Identifier: MIT
// rdma-tests: the RDMA-specific cases, on real verbs in the SoftRoCE guest.
// Across the wire by default (client binds SOFTROCE_CLIENT_IP, server on
// SOFTROCE_SERVER_IP); --one-device runs both ends on the client's device.
// Exits 77 with the reason outside a guest.  `--child MODE` is this
// executable re-run as a helper process by some cases.
#include "rdma_test.hpp"

int main(int argc, char **argv) { return twinwire::rdmatest::run_suite(argc, argv); }
