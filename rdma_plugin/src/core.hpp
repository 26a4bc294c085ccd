// SPDX-License-Identifier: MIT
// The four ABI objects (tw_transport, tw_transport_loop, tw_listener,
// tw_conn) and what they share.  Functions are in the .cpp files named in
// the comments.
#pragma once

#include "conn_list.hpp"
#include "counters.hpp"
#include "devices.hpp"
#include "id_reaper.hpp"
#include "pool.hpp"
#include "settings.hpp"
#include "srq.hpp"
#include "wire.hpp"

#include <twinwire/plugin.h>
#include <twinwire/rdma.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct tw_transport {
    const tw_host *host = nullptr;
    twrdma::Settings cfg;
    twrdma::Devices devices;
    twrdma::TransportCounters counters;
    /// The attached loops (under devices.mutex()): each releases its part
    /// of a device that goes (device_release.cpp).
    std::vector<tw_transport_loop *> loops;
    /// Destroys rdma_cm ids off the loops (last: it goes first, before the devices).
    twrdma::IdReaper reaper;
};

namespace twrdma {

/// What an rdma_cm_id's context points at.
enum class CmKind : uint32_t { Listener = 0x4c495354, Conn = 0x434f4e4e };
struct CmOwner {
    explicit CmOwner(CmKind k) : kind(k) {}
    CmKind kind;
};

/// Completion queues of one (loop, device) share one completion channel.
struct CqSlot {
    ibv_cq *cq = nullptr;
    int capacity = 0; ///< entries we hand out (below the real size: room for flushes)
    int used = 0;
};

struct LoopDevice {
    tw_transport_loop *loop = nullptr;
    Device *dev = nullptr;
    ibv_comp_channel *channel = nullptr;
    tw_watch *watch = nullptr;
    std::vector<CqSlot> cqs;
    std::unique_ptr<Pool> pool;
    std::unique_ptr<SharedReceives> receives; ///< before the pool goes: its buffers are the pool's
    /// Its QPs by number (numbers are per device): routes shared receives.
    std::unordered_map<uint32_t, tw_conn *> qps;
    /// Completions of other QPs that cq_settle() took off a CQ, handled
    /// before anything polled later (loop.cpp).
    std::vector<ibv_wc> deferred;
    uint32_t max_inline = 0; ///< learned from the first QP
};

enum class ConnState {
    ResolvingAddr,  ///< client: rdma_resolve_addr sent
    ResolvingRoute, ///< client: rdma_resolve_route sent
    Connecting,     ///< client: rdma_connect sent
    Queued,         ///< server: CONNECT_REQUEST waiting in the listener for accept()
    Accepting,      ///< server: handed to a loop, rdma_accept pending
    Established,    ///< data flows (also while lingering after close)
    Finished,       ///< verbs resources gone
};
const char *state_name(ConnState s);

/// Wrote into wr_id: serial (32) | kind (8) | index (24).
enum class WrKind : uint32_t {
    Recv = 1,
    Data = 2,
    Ctrl = 3,
    Fence = 4,
    Bind = 5,
    Invalidate = 6,
    Rma = 7,
    RmaBind = 8,
    RmaInvalidate = 9 ///< rma_*.cpp
};
inline uint64_t make_wr_id(uint32_t serial, WrKind kind, uint32_t index)
{
    return (uint64_t(serial) << 32) | (uint64_t(kind) << 24) | (index & 0xffffff);
}

/// The one thing a peer may write: the free part of our receive ring,
/// through type-2 memory windows bound to our QP, one per ring segment
/// (ring_grant.cpp).  Segments are counted cumulatively from the ring's
/// start in the stream (`base`): segment g covers stream bytes
/// [base + g * seg, base + (g + 1) * seg), window g % 8, lap g / 8.
struct RingGrant {
    uint8_t *mem = nullptr; ///< the ring
    uint64_t size = 0;
    ibv_mr *mr = nullptr;       ///< its registration (windows are bound over it)
    SpareRing *spare = nullptr; ///< from the pool's spare rings; nullptr: the block's own
    uint64_t base = 0;          ///< stream offset of the ring's first byte
    uint32_t gen = 0;           ///< which ring of the connection (signal marks name it)
    ibv_mw *mw[kRingSegments] = {};
    uint32_t lap0_rkey[kRingSegments] = {}; ///< key of each window's first binding
    uint64_t seg = 0;                       ///< segment size (rx.size / kRingSegments)
    uint64_t binds_posted = 0;              ///< segments whose bind was posted
    uint64_t binds_done = 0;                ///< segments whose bind completed (the peer may be told)
    uint64_t invalidated = 0;               ///< segments whose window was invalidated (filled)
    bool leaked = false;                    ///< deallocation failed: the block is never reused
};

/// What a signalled send completion frees: everything posted up to it.
struct SignalMark {
    uint64_t wr_seq;    ///< sq.wr_posted after the signalled WR
    uint64_t tx_end;    ///< tx.posted after it
    uint64_t ctrl_end;  ///< sq.ctrl_posted after it
    uint64_t binds_end; ///< grant.binds_posted after it
    uint32_t grant_gen; ///< grant.gen when it was posted
};

/// A receive ring being replaced (ring_resize.cpp): Binding the new ring's
/// windows, Offering it (RESIZE waits for a credit), Offered to the peer,
/// then Draining the old one (windows invalidated, bytes still read) after
/// RESIZE_ACK.
enum class Resize : uint8_t { None, Binding, Offering, Offered, Draining };

/// A TX staging ring: the block's own, or a spare ring while writes need more.
struct TxRing {
    uint8_t *mem = nullptr;
    uint64_t size = 0;
    uint32_t lkey = 0;
    SpareRing *spare = nullptr;
    uint64_t base = 0; ///< stream offset of its first byte
};

} // namespace twrdma

namespace twrdma {
struct RmaConn; // rma.hpp
}

struct tw_listener : twrdma::CmOwner {
    tw_listener() : CmOwner(twrdma::CmKind::Listener) {}
    tw_transport_loop *loop = nullptr;
    rdma_cm_id *id = nullptr;
    tw_incoming_cb on_incoming = nullptr;
    void *arg = nullptr;
    int backlog = 1024;
    std::deque<tw_conn *> queue; ///< requests waiting for accept()
    bool closed = false;
    sockaddr_storage addr{}; ///< where it listens (the port it got, for port 0)
    bool v6only = false;
    /// No id: its device went, or its address moved (ADDR_CHANGE), until
    /// an RDMA device holds the address (listener_relisten, from the loop's
    /// device watch).
    bool suspended = false;
};

// The parts of a connection, one per concern (tw_conn holds one of each).
namespace twrdma {

/// The verbs objects that carry the connection (conn_setup.cpp: setup_qp).
struct ConnResources {
    rdma_cm_id *id = nullptr;
    ibv_qp *qp = nullptr;
    LoopDevice *ldev = nullptr;
    int cq_slot = -1;
    int srq_slot = -1; ///< its shared receive queue in ldev->receives
    Block *block = nullptr;
};

/// The byte stream the peer writes into our receive ring (tw_conn::grant:
/// grant.mem, grant.size, from stream offset grant.base).
struct RecvStream {
    uint8_t *mem = nullptr;
    uint64_t size = 0;
    uint64_t head = 0;     ///< consumed by the application
    uint64_t tail = 0;     ///< arrived
    uint64_t reported = 0; ///< consumed count last sent to the peer
    /// The device went with bytes unread: they were copied here, from
    /// stream offset salvage_base, and are read from here.
    std::vector<uint8_t> salvage;
    uint64_t salvage_base = 0;
    bool peer_eof = false;
    bool rd_shut = false;
    bool borrowed = false;
};

/// The byte stream we send: the staging ring `mem` (ring.mem), `size`;
/// `old` drains after a switch to a larger ring.
struct SendStream {
    uint8_t *mem = nullptr;
    uint64_t size = 0;
    TxRing ring;
    TxRing old; ///< size 0: none
    uint64_t old_end = 0;
    uint64_t head = 0;   ///< accepted from the application
    uint64_t posted = 0; ///< handed to the device
    uint64_t done = 0;   ///< covered by a signalled completion
    bool sendbuf_out = false;
    bool wr_shut = false;
    int write_error = 0; ///< after the peer went away cleanly: -EPIPE
};

/// The peer's receive ring, where our WRITEs land (peer.ring_addr,
/// peer.ring_size of its hello, from stream offset `base`).
struct PeerRing {
    uint64_t written = 0;
    uint64_t consumed = 0;
    uint64_t base = 0;
    uint32_t rkeys[kRingSegments] = {}; ///< its segment windows (from its RING)
    bool known = false;                 ///< the peer's RING arrived: data may flow
    // what the peer offered in RESIZE, until our RESIZE_ACK switches to it
    uint64_t next_addr = 0;
    uint64_t next_size = 0;
    uint32_t next_rkeys[kRingSegments] = {};
};

/// Receive credits, both ways.
struct Credits {
    uint32_t send = 0;      ///< peer receives we may still use
    uint32_t owed_data = 0; ///< receives reposted after data, not yet reported
    uint32_t owed_ctrl = 0; ///< receives reposted after control messages
    bool stalled = false;
};

/// The send queue's accounting, and the buffers of our control messages.
struct SendQueue {
    bool window_wait = false;    ///< window operations wait for the remote ones before them: hold other posts
    uint64_t remote_seq = 0;     ///< wr_posted after the last remote operation (WRITE, SEND, READ)
    uint64_t window_waits = 0;   ///< posting held for window operations (tw_rdma_rings)
    uint64_t window_wait_at = 0; ///< remote_seq when the last such hold began
    uint64_t wr_posted = 0;
    uint64_t wr_done = 0;
    uint64_t last_signal_seq = 0;
    uint64_t shutdown_seq = 0; ///< wr_posted after our SHUTDOWN
    std::deque<SignalMark> marks;
    uint8_t *ctrl_bufs = nullptr;
    uint64_t ctrl_posted = 0;
    uint64_t ctrl_done = 0;
};

/// Adaptive rings (ring_resize.cpp).
struct RingResize {
    Resize state = Resize::None;
    RingGrant next;            ///< the ring offered (Binding, Offered) or left (Draining)
    uint64_t seq = 0;          ///< Binding: wr seq of the binds; Draining: of the last invalidation
    bool peer_waiting = false; ///< the peer's last data said more waits for ring space
    bool busy = false;         ///< the ring lapped twice within rdma.ring_idle_ms: grow it (to kBusyRing)
    uint64_t lap_mark = 0;     ///< grant.invalidated at the last lap counted
    uint64_t lap_ns = 0;       ///< when that lap was counted
    uint64_t last_data_ns = 0; ///< data sent or received (idle shrink)
    uint32_t grant_gens = 1;   ///< rings this connection had
    uint32_t rx_grows = 0, rx_shrinks = 0, tx_grows = 0, tx_shrinks = 0;
};

/// Whether the peer is alive.
struct Liveness {
    uint64_t last_rx_ns = 0;
    uint64_t ka_sent_ns = 0;
    uint64_t cq_generation = 0;
};

/// The host's view: its callback, what it waits for, what is to report.
struct HostSide {
    tw_conn_cb cb = nullptr;
    void *cb_arg = nullptr;
    uint32_t interest = TW_EV_READ;
    bool connected_pending = false;
    bool error_pending = false;
    bool in_ready = false;
    bool in_callback = false; ///< deliver() is in this connection's callback
    bool pump_due = false;    ///< a data completion or an operation in the callback left work for conn_pump
};

/// The client's handshake: where to, and how it went.
struct ClientHandshake {
    uint32_t timeout_ms = 0;
    uint64_t started_ns = 0;       ///< connect() time
    uint64_t addr_resolved_ns = 0; ///< ADDR_RESOLVED time
    uint32_t resolve_steps = 0;    ///< rdma_resolve_addr calls
    sockaddr_storage dst{};        ///< where to connect
    sockaddr_storage src{};        ///< source to bind (family 0: none)
};

/// The control messages a connection owes its peer, one bit each
/// (tw_conn::owed), sent by conn_pump as credits allow, in this order.
enum Owed : uint32_t {
    kOweRing = 1u << 0,         ///< our windows are bound: name them in RING
    kOweResizeAck = 1u << 1,    ///< switch to the ring the peer offered in RESIZE
    kOweKeepaliveAck = 1u << 2, ///< answer the peer's KEEPALIVE
    kOweCredit = 1u << 3,       ///< report consumed bytes and reposted receives
    kOweKeepalive = 1u << 4,    ///< the peer was quiet
    kOweShutdown = 1u << 5,     ///< the write side is shut (sent once the data is posted)
};

/// How far the connection's end got (tw_conn::life).  Each bit is set
/// once and never cleared.  A state of its own, next to ConnState, because
/// the two are independent: ConnState is how far the handshake and the
/// verbs resources got, while the host may close, the peer disconnect or
/// the SHUTDOWN exchange progress in most of those states (rsocket.c keeps
/// such bits in its one state word).
enum Life : uint32_t {
    kWasEstablished = 1u << 0, ///< TW_EV_CONNECTED was (or will be) reported
    kDisconnected = 1u << 1,   ///< DISCONNECTED seen or rdma_disconnect called
    kHostClosed = 1u << 2,     ///< the host closed it (or never saw it)
    kReaped = 1u << 3,         ///< queued for deletion (tw_transport_loop::reap)
    kShutdownSent = 1u << 4,   ///< our SHUTDOWN is posted
    kShutdownAcked = 1u << 5,  ///< and completed
};

} // namespace twrdma

struct tw_conn : twrdma::CmOwner {
    tw_conn() : CmOwner(twrdma::CmKind::Conn) {}

    tw_transport_loop *loop = nullptr; ///< owner
    tw_listener *listener = nullptr;   ///< while Queued
    twrdma::ConnState state = twrdma::ConnState::ResolvingAddr;
    uint32_t life = 0; ///< twrdma::Life bits
    bool is_client = false;
    uint32_t serial = 0; ///< routes completions (0: no QP)
    twrdma::ConnResources res;
    twrdma::RingGrant grant; ///< what the peer may write (our RX ring)
    bool ring_named = false; ///< RING queued (every window bound)

    int error = 0;
    std::string last_error;
    uint64_t deadline_ns = 0; ///< handshake timeout or linger end
    std::string peer_text;    ///< "10.77.0.2:7379" for messages

    // peer (from its hello)
    uint8_t version = 0;
    twrdma::WireHello peer{};
    twrdma::WireHello client_hello{}; ///< server: what the client sent

    twrdma::HostSide host;
    twrdma::ClientHandshake client;
    twrdma::RecvStream rx;
    twrdma::SendStream tx;
    twrdma::PeerRing remote;
    twrdma::Credits credits;
    twrdma::SendQueue sq;
    twrdma::RingResize resize;
    uint32_t owed = 0; ///< control messages waiting for a credit (twrdma::Owed bits)
    twrdma::Liveness live;

    tw_conn_stats stats{};

    twrdma::RmaConn *rma = nullptr; ///< one-sided memory state, on first use (rma_expose.cpp)
};

namespace twrdma {

inline bool owes(const tw_conn *c, Owed m) { return (c->owed & m) != 0; }
inline void owe(tw_conn *c, Owed m) { c->owed |= m; }
inline void settle(tw_conn *c, Owed m) { c->owed &= ~uint32_t(m); }

inline bool reached(const tw_conn *c, Life b) { return (c->life & b) != 0; }
inline void mark_reached(tw_conn *c, Life b) { c->life |= b; }

} // namespace twrdma

struct tw_transport_loop {
    tw_transport *t = nullptr;
    tw_loop *loop = nullptr;
    const tw_host *host = nullptr;
    rdma_event_channel *cm = nullptr;
    tw_watch *cm_watch = nullptr;
    tw_timer *tick = nullptr;
    bool tick_armed = false;
    tw_timer *refill = nullptr; ///< one-shot: register spare rings (loop.cpp)
    bool refill_armed = false;
    tw_timer *device_watch = nullptr; ///< periodic: devices gone and back, listeners to set up again
    std::vector<std::unique_ptr<twrdma::LoopDevice>> devs;
    std::unordered_map<uint32_t, tw_conn *> serials;
    uint32_t next_serial = 1;
    twrdma::ConnList conns;
    size_t tick_cursor = 0; ///< where the tick's next slice of conns starts
    std::vector<tw_listener *> listeners;
    std::vector<tw_conn *> ready;
    std::vector<tw_conn *> reap;
    std::vector<tw_listener *> dead_listeners;
    uint64_t last_completion_ns = 0;
    uint64_t cq_generation = 0;
    /// The devices whose asynchronous events this loop reads (device_events.cpp).
    std::vector<std::unique_ptr<twrdma::EventReading>> event_readers;
};

namespace twrdma {

/// The transport's settings, as seen from one of its connections.
inline const Settings &cfg(const tw_conn *c) { return c->loop->t->cfg; }

// --- log.cpp ---------------------------------------------------------------
void logf(const tw_transport *t, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
uint64_t now_ns(const tw_transport *t);

// --- loop.cpp ----------------------------------------------------------------
int loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out);
void loop_detach(tw_transport_loop *l);
/// The (loop, device) state, created (CQ channel, pool) on first use.
LoopDevice *loop_device(tw_transport_loop *l, Device *dev, std::string *why);
/// Free it: its CQs, pool and channel (no QP of the loop uses it any more).
void loop_device_destroy(tw_transport_loop *l, LoopDevice *ld);
/// Reserve CQ entries for a QP; returns the slot index or -1 with *why.
int cq_reserve(LoopDevice *ld, int entries, std::string *why);
void cq_release(LoopDevice *ld, int slot, int entries);
/// QP `qp_num` on CQ `slot` was destroyed: take its completions still
/// queued off the CQ now (its shared receives posted again), and keep the
/// others for the next drain, so a QP number the device hands out again
/// never gets a completion of the old QP.
void cq_settle(LoopDevice *ld, int slot, uint32_t qp_num);
void ensure_tick(tw_transport_loop *l);
/// A connection found no spare ring of the size it needs: register one from
/// a timer, right after the current operation.
void refill_soon(tw_transport_loop *l);
void reap_now(tw_transport_loop *l);
int has_pending(tw_transport_loop *l);
int process_pending(tw_transport_loop *l);

// --- events.cpp: readiness and callbacks ------------------------------------
void mark_ready(tw_conn *c);
uint32_t level_events(const tw_conn *c);
bool deliverable(const tw_conn *c);
void deliver(tw_conn *c);
/// The conn_pump that a completion or an operation in the callback left
/// for the end of the delivery (HostSide::pump_due).
void pump_if_due(tw_conn *c);

// --- conn_setup.cpp: handshakes and teardown -------------------------------
int conn_connect(tw_transport_loop *l, const tw_connect_params *p, tw_conn **out);
void conn_on_cm_event(tw_conn *c, const rdma_cm_event &ev, const void *pdata, size_t pdata_len);
void conn_accept_on_target(void *arg);
void conn_fail(tw_conn *c, int code, const std::string &text);
void conn_close(tw_conn *c);
/// Withdraw the peer's rkey, release QP, id and block.
void conn_teardown(tw_conn *c);
void conn_tick(tw_conn *c, uint64_t now);
/// The connection's device went (`why`): it fails with -ENODEV, keeps the
/// bytes that arrived readable, and lets go of every verbs object.
void conn_lose_device(tw_conn *c, const std::string &why);
tw_conn *conn_new(tw_transport_loop *l);
void conn_delete(tw_conn *c);

// --- datapath.cpp ----------------------------------------------------------
/// A send-queue completion.  `now`: when the batch holding `wc` was taken
/// off the CQ.
void conn_on_wc(tw_conn *c, const ibv_wc &wc, uint64_t now);
ssize_t conn_read(tw_conn *c, const iovec *iov, int iovcnt);
ssize_t conn_write(tw_conn *c, const iovec *iov, int iovcnt);
int conn_shutdown(tw_conn *c, int how);
int conn_send_buf_get(tw_conn *c, size_t min_len, tw_buf *out);
int conn_send_buf_submit(tw_conn *c, tw_buf *buf);
int conn_recv_buf_borrow(tw_conn *c, tw_buf *out);
int conn_recv_buf_return(tw_conn *c, tw_buf *buf, size_t consumed);
/// Free send-queue entries (stream and RMA share them).
uint32_t sq_free(const tw_conn *c);
/// Post a chain of send WRs, counted; signals the last when due or forced.
/// False (the connection failed) when the post fails.
bool post_chain(tw_conn *c, ibv_send_wr *first, ibv_send_wr *last, uint32_t count, bool force_signal);
/// Link wrs[0..n) into one chain for post_chain (n > 0).
void link_chain(ibv_send_wr *wrs, uint32_t n);
/// Post everything that credits, ring space and the SQ allow.
void conn_pump(tw_conn *c);
/// A zero-length, signalled RDMA WRITE: consumes no peer receive, and its
/// completion frees the TX ring behind unsignalled writes.
void post_fence(tw_conn *c);
/// Whether window operations (BIND_MW, LOCAL_INV) may be posted now: every
/// remote operation posted before completed.  If not, arranges a completion
/// and holds other posts until then (datapath.cpp says why).
bool window_ops_allowed(tw_conn *c);
/// A receive of the shared queue completed for `c`: `buf` is what it
/// holds (a control message), reposted by the caller after this returns.
void conn_on_recv(tw_conn *c, const ibv_wc &wc, const uint8_t *buf, uint64_t now);
/// Bind our ring's segment windows (once established); RING follows their completion.
void conn_bind_ring(tw_conn *c);
/// Ring bytes we may report consumed: the peer's next lap of a segment
/// opens only once that segment's window is bound again.
uint64_t reportable_consumed(const tw_conn *c);
/// Lingering close: done when our SHUTDOWN is acked and the peer ended.
void conn_check_linger(tw_conn *c);

// --- ring_grant.cpp: the peer's one remote right ---------------------------
/// Allocate the segment windows of `g` (setup, after the QP), or take new
/// keys on windows it already has; the ring (mem, size, mr) is set.
int grant_prepare(tw_conn *c, RingGrant &g, std::string *why);
/// The bind work request of cumulative segment `seg` of `g` (QP in RTS).
ibv_send_wr grant_bind_wr(tw_conn *c, RingGrant &g, uint64_t seg);
/// After posting that bind: the window's key is the new one from now on.
void grant_bind_posted(RingGrant &g, uint64_t seg);
/// The invalidation work request of cumulative segment `seg` (filled).
ibv_send_wr grant_invalidate_wr(tw_conn *c, RingGrant &g, uint64_t seg);
/// Withdraw the peer's rkeys (deallocate the windows).  False when that
/// failed: the peer may still hold a valid rkey, the ring must be retired.
bool grant_revoke(tw_conn *c, RingGrant &g);

// --- ring_resize.cpp: rings that grow under load and shrink when idle -------
/// Where stream byte `pos` (arrived, not consumed) is in our receive rings,
/// and how many bytes follow it contiguously in that ring (at most `max`).
uint8_t *rx_span(const tw_conn *c, uint64_t pos, uint64_t *len, uint64_t max);
/// Free bytes of the current TX staging ring.
uint64_t tx_space(const tw_conn *c);
/// Where TX stream byte `pos` lives, its lkey and contiguous bytes (at most `max`).
uint8_t *tx_span(const tw_conn *c, uint64_t pos, uint32_t *lkey, uint64_t *len, uint64_t max);
/// A write found the TX ring full of bytes in flight, or a lent buffer of
/// `need` bytes cannot fit it: move to a larger one.  True when it did.
bool tx_grow(tw_conn *c, uint64_t need);
/// The receiver's side of a resize, from conn_pump: start growing (the
/// reader drained the ring while the peer waited) or shrinking, bind the
/// new windows, offer them, withdraw the old ones, free the old ring.
void resize_pump(tw_conn *c);
/// RESIZE arrived (the sender's side): the ring to switch to.
void resize_on_offer(tw_conn *c, const WireCtrl &m, const uint8_t *buf);
/// RESIZE_ACK arrived: bytes from `m.sent` on go to the new ring.
void resize_on_ack(tw_conn *c, const WireCtrl &m);
/// Our RESIZE_ACK is posted at stream offset remote.written: write the new ring.
void resize_switch_peer_ring(tw_conn *c);
/// The connection's rings for TW_RDMA_CTRL_GET_RINGS.
void conn_rings(const tw_conn *c, tw_rdma_rings *out);
/// From the tick: shrink rings idle for rdma.ring_idle_ms.
void resize_on_tick(tw_conn *c, uint64_t now);
/// Teardown: withdraw the extra windows, give the spare rings back (or
/// retire receive rings a peer may still write).  `revoked`: the current
/// grant's windows are gone.  Returns whether the block's own ring is safe
/// to reuse.
bool resize_teardown(tw_conn *c, bool revoked);

// --- device_release.cpp: devices that go and come back ----------------------
/// `d` was removed or failed (`why` names the event): nothing new starts on
/// it, every loop releases its part (this one at once, the others from
/// their device watch), and the last one releases the PD and the context.
void device_lost(tw_transport_loop *l, Device *d, const std::string &why);
/// Release what this loop holds of the gone device `d`, if it still does.
void loop_release_device(tw_transport_loop *l, Device *d);
/// The loop's device watch (once a second): devices whose node left sysfs,
/// parts still to release, listeners to set up again.
void device_watch(tw_transport_loop *l);

// --- listener.cpp ----------------------------------------------------------
/// The listener's device went: drop its queue, destroy its id, and listen
/// again once an RDMA device holds its address.
void listener_suspend(tw_listener *ls, const std::string &why);
/// A suspended listener: listen again now if a device holds the address.
void listener_relisten(tw_listener *ls);
/// ADDR_CHANGE: a new id resolves the address's device and port again (now,
/// or from the device watch once the old id is gone); the queue stays.
void listener_follow_address(tw_listener *ls, const char *event);
int listener_open(tw_transport_loop *l, const tw_listen_params *p, tw_listener **out);
void listener_on_cm_event(tw_listener *ls, const rdma_cm_event &ev, const void *pdata, size_t pdata_len);
int listener_accept(tw_listener *ls, tw_transport_loop *target, tw_conn **out);
void listener_close(tw_listener *ls);
void listener_drop_queued(tw_listener *ls, tw_conn *c, const char *why);

} // namespace twrdma
