// SPDX-License-Identifier: MIT
#include "payload.hpp"

namespace twinwire::conformance {

std::string make_payload(size_t len, uint64_t seed)
{
    std::string out(len, '\0');
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1; // xorshift64* state, never 0
    for (size_t i = 0; i < len; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out[i] = static_cast<char>((x * 0x2545F4914F6CDD1Dull) >> 56);
    }
    return out;
}

uint64_t checksum(std::string_view data)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : data) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

} // namespace twinwire::conformance
