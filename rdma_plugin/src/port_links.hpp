// SPDX-License-Identifier: MIT
// How a port is linked, in the words ibv_devinfo and `ip address` use: its
// speed and width, and the network interface (and addresses) behind a GID,
// which is what an rdma_cm user resolves.
#pragma once

#include <cstdint>
#include <string>

namespace twrdma {

/// "speed 25.0 Gb/s (EDR) width 4X (100.0 Gb/s)" from ibv_port_attr's
/// active_speed and active_width; unknown codes are shown as numbers.
std::string link_rate_text(uint8_t active_width, uint8_t active_speed);

/// "eth1 10.0.0.1/24 fe80::1/64": the interface with this index and its
/// addresses (getifaddrs), "" when the index is 0 (no netdev, as on IB).
std::string netdev_text(uint32_t ifindex);

} // namespace twrdma
