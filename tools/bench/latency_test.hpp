// SPDX-License-Identifier: MIT
// Ping-pong latency: each connection sends one message, waits for the echo,
// and records the round trip.
#pragma once

#include "histogram.hpp"
#include "phase.hpp"

namespace twinwire::bench {

/// Round trips not recorded at the start of each connection.
constexpr uint64_t kWarmupRoundTrips = 10;

class LatencyWorker : public Worker {
public:
    /// `iterations` round trips (0: until `duration_s` has passed).
    LatencyWorker(size_t message_size, uint64_t iterations, double duration_s, bool zero_copy = false);

    void begin() override;
    void on_data(Buffer &in) override;
    size_t on_borrowed(const char *data, size_t len) override;

    Histogram histogram; ///< round trips in nanoseconds
    uint64_t round_trips = 0;

private:
    void send();
    bool echo_matches(Buffer &in) const;
    /// The whole echo is in: record the round trip and send the next.
    void echo_complete(uint64_t now);

    size_t size_;
    uint64_t iterations_;
    uint64_t duration_ns_;
    uint64_t deadline_ns_ = 0;
    uint64_t warmup_left_ = kWarmupRoundTrips;
    uint64_t sequence_ = 0;
    uint64_t sent_at_ = 0;
    size_t echoed_ = 0; ///< zero-copy: bytes of this echo already checked
    std::string payload_;
};

} // namespace twinwire::bench
