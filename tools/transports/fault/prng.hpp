// SPDX-License-Identifier: MIT
// The per-connection generator: splitmix64 seeded from fault.seed and the
// connection's ordinal, so the same seed and the same calls give the same
// faults, whatever other connections do.
#pragma once

#include <cstdint>

namespace fault {

class Prng {
public:
    void seed(uint64_t seed, uint64_t ordinal) { state_ = mix(seed ^ mix(ordinal + 0x9e3779b97f4a7c15ull)); }
    uint64_t next() { return mix(state_ += 0x9e3779b97f4a7c15ull); }
    /// Uniform in [0, 1).
    double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
    /// True with probability p (no draw when p is 0: unset faults change nothing).
    bool chance(double p) { return p > 0 && unit() < p; }
    /// Uniform in [0, n] (no draw when n is 0).
    uint64_t upto(uint64_t n) { return n ? next() % (n + 1) : 0; }

private:
    static uint64_t mix(uint64_t z)
    {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    uint64_t state_ = 0;
};

} // namespace fault
