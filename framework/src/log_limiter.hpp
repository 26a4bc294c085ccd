// SPDX-License-Identifier: MIT
// What log.cpp does to a message before it is written: escape the bytes a
// peer may have put in it, and limit how often the same line repeats.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace twinwire::log {

/// Copy `len` bytes to `out` (NUL-terminated, at most `cap` bytes with the
/// NUL): printable ASCII as is, \n \r \t as such, every other byte as \xNN,
/// and '\\' doubled when `double_backslash` (log::printable(): quoted peer
/// bytes read back unambiguously; whole messages keep their backslashes, so
/// text printable() made is not escaped twice).  Returns the length written.
size_t escape_nonprintable(const char *in, size_t len, char *out, size_t cap, bool double_backslash);

/**
 * Per-message rate limiting.  Lines are "similar" when they come from the
 * same source and differ only in their digits (addresses, ports, counts,
 * ids).  Each such line may appear `lines` times per window of `seconds`;
 * later ones are counted, not written, and the next line written for it
 * says how many were suppressed.  All lines together are capped at 20 times
 * `lines` a second, so varying text (peer bytes) cannot flood either.
 * Not thread-safe: the log lock guards it.
 */
class RateLimiter {
public:
    void configure(unsigned lines, unsigned seconds);
    void reset();
    /// True when the line may be written; *suppressed is then the number of
    /// similar lines dropped since the last one written (to be reported).
    bool admit(const char *source, const char *msg, uint64_t now_ns, uint64_t *suppressed);

private:
    struct Slot {
        uint64_t key = 0;
        uint64_t window_start = 0;
        unsigned lines = 0;
        uint64_t suppressed = 0;
    };
    std::array<Slot, 256> slots_{};
    unsigned lines_ = 10;
    uint64_t window_ns_ = 10'000'000'000ull;
    uint64_t global_start_ = 0;
    unsigned global_lines_ = 0;
    uint64_t global_suppressed_ = 0; ///< dropped by the global cap or evicted with their slot
};

} // namespace twinwire::log
