// SPDX-License-Identifier: MIT
// Socket addresses for the cases: parse, print, ports.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace twinwire::conformance {

/// "127.0.0.1" or "::1" with a port; throws std::invalid_argument otherwise.
sockaddr_storage make_address(const std::string &ip, uint16_t port = 0);
socklen_t address_length(const sockaddr_storage &addr);
uint16_t port_of(const sockaddr_storage &addr);
void set_port(sockaddr_storage &addr, uint16_t port);
/// The same host part (ports ignored).
bool same_host(const sockaddr_storage &a, const sockaddr_storage &b);
/// "127.0.0.1", "::1" (no port, no brackets)
std::string host_text(const sockaddr_storage &addr);
/// "127.0.0.1:80", "[::1]:80"
std::string to_text(const sockaddr_storage &addr);
inline const sockaddr *as_sockaddr(const sockaddr_storage &addr) { return reinterpret_cast<const sockaddr *>(&addr); }

} // namespace twinwire::conformance
