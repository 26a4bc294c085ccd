// SPDX-License-Identifier: MIT
// Test payloads that differ per connection and a checksum to compare them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace twinwire::conformance {

/// `len` pseudo-random bytes determined by `seed` (no period shorter than
/// the payload, so a lost or duplicated block changes the checksum).
std::string make_payload(size_t len, uint64_t seed);
/// FNV-1a, 64 bits.
uint64_t checksum(std::string_view data);

} // namespace twinwire::conformance
