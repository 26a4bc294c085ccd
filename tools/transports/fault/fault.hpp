// SPDX-License-Identifier: MIT
// The fault transport's objects: each wraps the inner transport's object
// of the same kind and decides, with a seeded generator per connection,
// which faults to inject into what passes through.
#pragma once

#include "fault_ctrl.h"
#include "ops.h"
#include "prng.hpp"
#include "settings.hpp"

#include <atomic>
#include <cstdarg>
#include <deque>
#include <string>
#include <vector>

struct tw_transport {
    const tw_host *host;
    const tw_transport_ops *inner;
    tw_transport *inner_t = nullptr;
    fault::Settings settings;
    std::atomic<uint64_t> ordinals{0};
    // Totals over every connection (any loop thread adds to them).
    std::atomic<uint64_t> totals[sizeof(tw_fault_counts) / 8 - 1] = {};
};

struct tw_transport_loop {
    tw_transport *t;
    tw_loop *loop;
    tw_transport_loop *inner;
    /// Connections whose events fault produces itself (held bytes, bursts,
    /// faults of its own), looked at before the loop sleeps.
    std::vector<tw_conn *> active;
    /// Closed by the host with bytes still held back: flushed, then closed.
    std::vector<tw_conn *> lingering;
};

struct tw_listener {
    tw_transport_loop *fl;
    tw_listener *inner;
    tw_incoming_cb on_incoming;
    void *arg;
    uint32_t port;
};

namespace fault {

/// Bytes held back until `ready_ns`.
struct Chunk {
    std::string data;
    size_t off = 0;
    uint64_t ready_ns = 0;
};

/// One direction's queue with its timing (latency, jitter, bandwidth cap).
struct Queue {
    std::deque<Chunk> chunks;
    size_t bytes = 0;
    uint64_t last_ready_ns = 0; ///< delivery stays in order
    uint64_t link_free_ns = 0;  ///< when the capped link has sent what it holds
    bool ready(uint64_t now) const { return !chunks.empty() && chunks.front().ready_ns <= now; }
};

/// The index of each counter in tw_fault_counts, after the size header.
enum Count {
    kConnections,
    kTargeted,
    kShortWrites,
    kShortReads,
    kEagainBursts,
    kEagainReturns,
    kDelayed,
    kStalls,
    kRefused,
    kTimedOut,
    kConnectReset,
    kResets,
    kCountN
};

} // namespace fault

struct tw_conn {
    tw_transport *t;
    tw_transport_loop *fl; ///< set when the owning loop is known (accept: at set_callback)
    tw_conn *inner = nullptr;
    tw_conn_cb cb = nullptr;
    void *arg = nullptr;
    uint32_t want = TW_EV_READ;
    uint64_t ordinal = 0;
    uint32_t port = 0;
    bool targeted = false;
    bool rx_shaped = false;
    bool tx_shaped = false;
    fault::Prng rng;
    uint64_t counts[fault::kCountN] = {};
    std::string log;

    bool in_active = false;
    bool up = false; ///< inner reported TW_EV_CONNECTED (or accepted)
    bool report_connected = false;
    int error = 0; ///< fault's own error (a reset it made, a refused connect)
    bool report_error = false;
    std::string error_text;
    bool reset_on_connect = false;
    uint64_t connect_deadline_ns = 0; ///< a connect fault will time out then
    bool shut_wr = false;
    bool shut_wr_pending = false; ///< shutdown once the held bytes are out
    bool closed = false;          ///< the host closed it; lingering
    uint64_t linger_deadline_ns = 0;
    uint64_t eagain_until_ns = 0;
    uint32_t inner_events = TW_EV_READ;
    bool rx_eof = false;
    int rx_error = 0;
    fault::Queue rxq, txq;
    uint64_t bytes_written = 0;
    uint64_t writes = 0, reads = 0;
    uint64_t would_block = 0; ///< writes fault cut short or refused (added to the inner's write_would_block)
    int tx_error = 0;         ///< the inner write that failed while flushing
    bool tx_blocked = false;  ///< the inner connection refused the last flush (-EAGAIN)
    std::string send_buf;     ///< a zero-copy send buffer lent from fault's queue, when tx_shaped
    bool send_buf_out = false;
    uint64_t zero_copy_sends = 0, zero_copy_recvs = 0; ///< through fault's own queue memory
    bool recv_buf_out = false;                         ///< a zero-copy receive buffer lent from the receive queue
    tw_timer *timer = nullptr;
    uint64_t timer_at = 0;
    struct sockaddr_storage peer {};
    uint32_t peerlen = 0;
};

namespace fault {

inline const tw_host *host_of(const tw_conn *c) { return c->t->host; }

/// Count a fault and write it to the connection's log and the debug log.
void note(tw_conn *c, Count which, const char *fmt, ...) TW_PRINTF(3, 4);
/// Wrap an inner connection (nullptr for a connect fault decides alone).
tw_conn *new_conn(tw_transport *t, tw_transport_loop *fl, tw_conn *inner, uint32_t port);
/// Events fault itself has for the connection now (0: none).
uint32_t own_events(tw_conn *c, uint64_t now);
/// Deliver them; for process_pending_data and the timer.
void deliver(tw_conn *c);
/// Flush held bytes, end bursts, time out connects that are due.
void advance(tw_conn *c, uint64_t now);
void make_active(tw_conn *c);
void free_conn(tw_conn *c);
/// Whether fault.target selects a connection with this ordinal and port.
bool targets(const Settings &s, uint64_t ordinal, uint32_t port);
uint32_t port_of(const struct sockaddr *addr);

} // namespace fault
