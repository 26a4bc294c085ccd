// SPDX-License-Identifier: MIT
// The fault.* keys: parsed, checked, and filled from a named profile.
#pragma once

#include <twinwire/host.h>

#include <cstdint>
#include <string>

namespace fault {

/// Latency and bandwidth of one direction (rx: what this end receives,
/// tx: what it sends).
struct Shaping {
    uint64_t latency_ns = 0;
    uint64_t jitter_ns = 0;
    uint64_t bandwidth = 0; ///< bytes per second; 0: no cap
    bool active() const { return latency_ns || jitter_ns || bandwidth; }
};

struct Settings {
    std::string inner = "tcp";
    std::string profile = "none";
    uint64_t seed = 0;
    bool seed_set = false;
    enum class Target { All, OneIn, Port } target = Target::All;
    uint64_t one_in = 1;
    uint32_t port = 0;
    std::string target_text = "all";

    Shaping rx, tx;
    uint64_t max_write = 0; ///< 0: no cut
    uint64_t max_read = 0;
    double eagain_probability = 0;
    uint64_t eagain_ns = 2000000;
    double connect_refuse_probability = 0;
    double connect_timeout_probability = 0;
    double connect_reset_probability = 0;
    uint64_t reset_after_bytes = 0; ///< 0: never
    double reset_probability = 0;   ///< per write call
    double stall_probability = 0;   ///< per chunk received
    uint64_t stall_ns = 100000000;

    bool data_faults() const
    {
        return rx.active() || tx.active() || max_write || max_read || eagain_probability > 0 || reset_after_bytes ||
               reset_probability > 0 || stall_probability > 0;
    }
    bool write_faults() const
    {
        return tx.active() || max_write || eagain_probability > 0 || reset_after_bytes || reset_probability > 0;
    }
    /// "max_write=1000 eagain_probability=0.05 ...": what is set, for describe and the log.
    std::string summary() const;
};

/// Read every fault.* key through `host` (a profile first, then the keys
/// that override it).  Returns 0, or -TW_ECONFIG with the reason in `why`.
int load_settings(const tw_host *host, Settings *out, char *why, size_t why_len);

/// The profile names, for messages and docs: "none, flaky, slow, lossy, chaos".
const char *profile_names();

} // namespace fault
