// SPDX-License-Identifier: MIT
// Addresses as text and text as addresses.
#pragma once

#include <cstdint>
#include <string>
#include <sys/socket.h>
#include <vector>

namespace twinwire {

/// One socket address and its length.
struct SocketAddress {
    struct sockaddr_storage ss {};
    socklen_t len = 0;
    const struct sockaddr *sa() const { return reinterpret_cast<const struct sockaddr *>(&ss); }
};

/// "10.0.0.1:6379", "[::1]:6379", "unix:/run/x.sock", "unix:@name"; "" for
/// other families.
std::string sockaddr_text(const struct sockaddr *sa);

/// Addresses that need no lookup: "unix:/path" or "unix:@abstract" (the port
/// is ignored), a numeric IPv4 or IPv6 address.  Returns false when `host`
/// is none of these (a name, "*", ""); *why is set when it is a malformed
/// Unix address (too long, empty).
bool parse_literal_address(const std::string &host, uint16_t port, SocketAddress *out, std::string *why);

/// Append `sa` unless the list has it already (resolvers repeat addresses).
void add_address(std::vector<SocketAddress> *list, const struct sockaddr *sa, socklen_t len);

/// Where to listen: "*", "" and "::" give one dual-stack IPv6 socket
/// (IPV6_V6ONLY=0, so IPv4 clients arrive too) when the host has IPv6, else
/// 0.0.0.0; a literal gives itself; a host name gives every address it has
/// (getaddrinfo: at start-up, before the loops serve).  Returns "" or the
/// error.
std::string listen_addresses(const std::string &host, uint16_t port, std::vector<SocketAddress> *out);

} // namespace twinwire
