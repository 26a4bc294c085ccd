// SPDX-License-Identifier: MIT
// Checking a plugin's vtable (internal to libtwinwire).
#pragma once

#include <twinwire/transport.h>

#include <string>

namespace twinwire {

/// Check a vtable and complete it: returns "" and fills *out when every
/// required member is there, otherwise the reason ("missing required
/// operation 'accept'", "operations table is 16 bytes, smaller than ...").
std::string normalise_ops(const tw_transport_ops *ops, tw_transport_ops *out);

} // namespace twinwire
