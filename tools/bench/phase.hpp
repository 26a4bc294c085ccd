// SPDX-License-Identifier: MIT
// One test at one message size: N client connections, each driven by a
// Worker on its own loop, and the bookkeeping that tells loop 0 when the
// last one has finished.
#pragma once

#include "options.hpp"

#include <twinwire/rdma.h>
#include <twinwire/runtime.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace twinwire::bench {

/// Counters the progress line reads from loop 0 while workers run.
struct LiveCounters {
    std::atomic<uint64_t> operations{0}; ///< round trips, or messages sent
    std::atomic<uint64_t> bytes{0};      ///< payload bytes sent
};

class Phase;

/// Drives one connection.  Everything but the constructor runs on the
/// connection's loop; the phase reads the results after finish().
class Worker : public std::enable_shared_from_this<Worker> {
public:
    virtual ~Worker() = default;

    /// The connection is up: send the hello and start.
    virtual void begin() = 0;
    /// Bytes arrived.
    virtual void on_data(Buffer &in) = 0;
    /// --zero-copy: bytes lent in place by the transport; returns how many
    /// were used (the rest reaches on_data, copied).
    virtual size_t on_borrowed(const char *, size_t) { return 0; }

    /// End this worker (error "" = success); idempotent.  Closes the connection.
    void finish(const std::string &error);
    bool finished() const { return finished_; }

    std::string transport;       ///< the connection's transport
    std::string fallback_reason; ///< why a wanted RDMA connection runs over TCP
    std::string error;           ///< "" when it succeeded
    bool zero_copy = false;      ///< --zero-copy: borrowed receive buffers, lent send buffers
    tw_conn_stats stats{};       ///< the transport's counters when it finished
    tw_rdma_rings rings{};       ///< the RDMA transport's rings when it finished
    bool have_rings = false;     ///< rings is filled (the connection ran over RDMA)
    uint64_t start_ns = 0;       ///< first measured operation began
    uint64_t end_ns = 0;         ///< last measured operation ended

protected:
    /// Release what belongs to the loop (timers); runs inside finish().
    virtual void on_finish() {}

    ConnectionPtr conn_;
    LiveCounters *live_ = nullptr;

private:
    friend class Phase;
    Phase *phase_ = nullptr;
    bool finished_ = false;
};

class Phase : public std::enable_shared_from_this<Phase> {
public:
    using MakeWorker = std::function<std::shared_ptr<Worker>(unsigned index)>;

    Phase(Runtime &rt, const TargetOptions &target, unsigned connections, MakeWorker make);

    /// Connect every worker; `on_done` runs on loop 0 after the last one finished.
    void start(std::function<void()> on_done);
    /// Finish every worker still running with `why` (from loop 0).
    void abort(const std::string &why);

    LiveCounters &live() { return live_; }
    /// Valid once on_done has run.
    const std::vector<std::shared_ptr<Worker>> &workers() const { return workers_; }

private:
    friend class Worker;
    void worker_done();

    Runtime &rt_;
    TargetOptions target_;
    std::vector<std::shared_ptr<Worker>> workers_;
    std::vector<unsigned> loop_of_;
    LiveCounters live_;
    std::atomic<unsigned> remaining_;
    std::function<void()> on_done_;
};

/// The client side's transport counters, summed over the phase's connections.
tw_conn_stats summed_stats(const Phase &phase);

/// The RDMA rings of a phase's connections when they finished.
struct RingsSummary {
    bool present = false;    ///< some connection reported its rings
    uint64_t registered = 0; ///< bytes, summed
    uint64_t rx_ring = 0;    ///< largest receive ring
    uint64_t tx_ring = 0;    ///< largest TX ring
    uint64_t rx_grows = 0, tx_grows = 0;
    uint64_t window_waits = 0; ///< posting held for window operations, summed
};
RingsSummary summed_rings(const Phase &phase);

/// Seconds from the first measured operation to the last one, over every
/// worker that measured something (0 when none did).
double measured_seconds(const Phase &phase);

} // namespace twinwire::bench
