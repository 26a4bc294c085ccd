// SPDX-License-Identifier: MIT
// Addresses as text and text as addresses.
#pragma once

#include <string>
#include <sys/socket.h>

namespace twinwire {

/// "10.0.0.1:6379", "[::1]:6379"; "" for other families.
std::string sockaddr_text(const struct sockaddr *sa);

/// Resolve "host" + port to one address (numeric first, then DNS; passive
/// for listening: "" or "*" = any).  Returns "" and fills *out, or the error.
std::string resolve_address(const std::string &host, uint16_t port, bool passive, struct sockaddr_storage *out,
                            socklen_t *len);

} // namespace twinwire
