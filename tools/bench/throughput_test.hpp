// SPDX-License-Identifier: MIT
// Streaming throughput: each connection writes messages as fast as the
// transport takes them (one write() per message, as a daemon writes
// replies).  One direction: the server acknowledges the bytes it received.
// Both directions (perftest's -b): the server echoes every byte as it
// arrives and the client reads them all back, so both directions stream at
// once through each end's rings.
#pragma once

#include "phase.hpp"

#include <twinwire/loop.hpp>

#include <memory>

namespace twinwire::bench {

class ThroughputWorker : public Worker {
public:
    /// `iterations` messages (0: until `duration_s` has passed).
    ThroughputWorker(size_t message_size, uint64_t iterations, double duration_s, bool zero_copy = false,
                     bool bidirectional = false);

    void begin() override;
    void on_data(Buffer &in) override;

    uint64_t messages = 0;     ///< messages written
    uint64_t bytes = 0;        ///< payload bytes written
    uint64_t acknowledged = 0; ///< payload bytes the server says it received (both directions: echoed back)
    const bool bidirectional;

private:
    void on_finish() override;
    void pump();
    enum class Wrote { Yes, NoBufferFree, Refused };
    /// Write one message (NoBufferFree: --zero-copy found no lent buffer;
    /// on_drain resumes).
    Wrote write_message();
    bool enough(uint64_t now) const;
    /// Both directions: count the echo, finish once all of it is back.
    void take_echo(Buffer &in);
    void finish_if_all_back();

    size_t size_;
    uint64_t iterations_;
    uint64_t duration_ns_;
    uint64_t deadline_ns_ = 0;
    uint64_t round_messages_; ///< messages per round
    uint64_t round_left_ = 0; ///< messages still to write in this round
    uint64_t unreported_ = 0; ///< messages not yet added to the live counters
    size_t high_water_;       ///< stop writing while this much is queued
    bool ended_ = false;      ///< end marker written, waiting for the ack
    std::string payload_;
    std::unique_ptr<Timer> again_; ///< resumes pump() on the next loop turn
};

} // namespace twinwire::bench
