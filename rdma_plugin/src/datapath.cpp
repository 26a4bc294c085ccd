// SPDX-License-Identifier: MIT
// The byte stream: TX staging ring -> RDMA WRITE_WITH_IMM -> the peer's RX
// ring, with receive credits, ring-space reports (CREDIT), selective
// signalling and control messages.
#include "core.hpp"
#include "rma.hpp"

#include "report.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace twrdma {

uint32_t sq_free(const tw_conn *c) { return cfg(c).sq_depth - static_cast<uint32_t>(c->sq.wr_posted - c->sq.wr_done); }

namespace {

uint32_t owed_total(const tw_conn *c) { return c->credits.owed_data + c->credits.owed_ctrl; }

/// Take up to `max` owed credits for a message, data-owed first.
uint32_t take_owed(tw_conn *c, uint32_t max)
{
    uint32_t d = std::min(c->credits.owed_data, max);
    c->credits.owed_data -= d;
    uint32_t k = std::min(c->credits.owed_ctrl, max - d);
    c->credits.owed_ctrl -= k;
    return d + k;
}

} // namespace

bool post_chain(tw_conn *c, ibv_send_wr *first, ibv_send_wr *last, uint32_t count, bool force_signal)
{
    const Settings &s = cfg(c);
    uint64_t seq_after = c->sq.wr_posted + count;
    bool signal = force_signal || seq_after - c->sq.last_signal_seq >= s.sq_depth / 4 ||
                  (c->tx.posted - c->tx.done) * 2 > c->tx.size ||
                  (c->sq.ctrl_posted - c->sq.ctrl_done) * 2 >= Settings::kCtrlSlots;
    if (signal) last->send_flags |= IBV_SEND_SIGNALED;
    ibv_send_wr *bad = nullptr;
    int rc = ibv_post_send(c->res.qp, first, &bad);
    if (rc) {
        conn_fail(c, -TW_EWC, call_failed("ibv_post_send", rc, "send queue full or QP in error state"));
        return false;
    }
    c->sq.wr_posted = seq_after;
    // A chain is window operations only or remote operations only.
    if (first->opcode != IBV_WR_BIND_MW && first->opcode != IBV_WR_LOCAL_INV) c->sq.remote_seq = seq_after;
    if (signal) {
        c->sq.last_signal_seq = seq_after;
        c->sq.marks.push_back(
            SignalMark{seq_after, c->tx.posted, c->sq.ctrl_posted, c->grant.binds_posted, c->grant.gen});
    }
    return true;
}

void link_chain(ibv_send_wr *wrs, uint32_t n)
{
    for (uint32_t i = 0; i + 1 < n; ++i) wrs[i].next = &wrs[i + 1];
    wrs[n - 1].next = nullptr;
}

namespace {

bool send_ctrl(tw_conn *c, Ctrl type, bool force_signal)
{
    WireCtrl m{};
    m.version = c->version;
    m.type = static_cast<uint8_t>(type);
    m.credits = take_owed(c, owed_total(c));
    m.consumed = reportable_consumed(c);
    c->rx.reported = m.consumed;
    if (type == Ctrl::Shutdown || type == Ctrl::ResizeAck) m.sent = c->remote.written;
    uint8_t *slot = c->sq.ctrl_bufs + (c->sq.ctrl_posted % Settings::kCtrlSlots) * kRecvBufSize;
    uint32_t len = sizeof(WireCtrl);
    if (ctrl_has_keys(m.type)) {
        // RING names the ring the stream starts in, RESIZE the one offered.
        const RingGrant &g = type == Ctrl::Ring ? c->grant : c->resize.next;
        m.sent = reinterpret_cast<uint64_t>(g.mem);
        if (type == Ctrl::Resize) m.rkey = static_cast<uint32_t>(g.size);
        WireRing wire = ring_to_wire(m, g.lap0_rkey);
        std::memcpy(slot, &wire, sizeof wire);
        len = sizeof wire;
    } else {
        WireCtrl wire = ctrl_to_wire(m);
        std::memcpy(slot, &wire, sizeof wire);
    }
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uint64_t>(slot);
    sge.length = len;
    sge.lkey = c->res.block->lkey;
    ibv_send_wr wr{};
    wr.wr_id = make_wr_id(c->serial, WrKind::Ctrl, static_cast<uint32_t>(type));
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    if (c->res.ldev->max_inline >= len) wr.send_flags = IBV_SEND_INLINE;
    c->sq.ctrl_posted += 1;
    c->credits.send -= 1;
    if (!post_chain(c, &wr, &wr, 1, force_signal)) return false;
    c->stats.control_sent += 1;
    return true;
}

} // namespace

void post_fence(tw_conn *c)
{
    if (c->sq.wr_posted == c->sq.last_signal_seq || sq_free(c) < 2) return;
    ibv_send_wr wr{};
    wr.wr_id = make_wr_id(c->serial, WrKind::Fence, 0);
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.num_sge = 0;
    // A zero-length WRITE checks no key (IBA C9-88): any segment's will do,
    // and none before the peer named its ring.
    wr.wr.rdma.remote_addr = c->remote.known ? c->peer.ring_addr : 0;
    wr.wr.rdma.rkey = c->remote.known ? c->remote.rkeys[0] : 0;
    post_chain(c, &wr, &wr, 1, true);
}

bool window_ops_allowed(tw_conn *c)
{
    // rxe (Linux 6.1) breaks two ways when a window operation is posted
    // behind a remote operation that has not completed: a retransmission
    // of it replays the finished BIND_MW, whose window moved to a new key,
    // so the replay fails and the QP goes to error; and a LOCAL_INV, which
    // waits for everything before it, can miss its wake-up and stall the
    // send queue.  Both were measured (docs/rdma-design.md, "Window
    // operations").  Behind window operations only, neither can happen:
    // nothing is retransmitted, and they complete without the network.
    if (c->sq.wr_done >= c->sq.remote_seq) return true;
    c->sq.window_wait = true;
    // A hold lasts while nothing remote but its fence is posted: count it once.
    if (c->sq.window_wait_at != c->sq.remote_seq) c->sq.window_waits += 1;
    post_fence(c); // unless the last request is signalled already
    c->sq.window_wait_at = c->sq.remote_seq;
    return false;
}

namespace {

/// WRITEs one data message may take (one per segment of the peer's ring).
constexpr uint32_t kMaxPieces = 4;

/// Free bytes of the peer's ring (bytes before remote.base went to the
/// peer's previous ring).
uint64_t peer_ring_free(const tw_conn *c)
{
    return c->peer.ring_size - (c->remote.written - std::max(c->remote.consumed, c->remote.base));
}

/// Whether credits and the peer's ring let a data message go; a stall is
/// counted once when not.
bool credits_allow_data(tw_conn *c, uint64_t r_free)
{
    if (c->credits.send > c->peer.credit_reserve && r_free != 0) return true;
    if (!c->credits.stalled) {
        c->credits.stalled = true;
        c->stats.credit_stalls += 1;
    }
    return false;
}

/// Fill the WRITEs of one data message of `n` bytes (TX stream from
/// tx.posted, the peer's ring from remote.written): one per segment of the
/// peer's ring it touches, each with up to two SGEs (our ring wraps).
/// Returns how many, chained; the caller makes the last one carry the
/// immediate.
uint32_t build_data_writes(tw_conn *c, uint64_t n, uint64_t seg, ibv_send_wr *wrs, ibv_sge (*sges)[2])
{
    uint32_t count = 0;
    uint64_t done = 0;
    uint32_t inline_max = c->res.ldev->max_inline;
    while (done < n) {
        uint64_t pos = c->remote.written + done - c->remote.base; // in the peer's ring
        uint64_t roff = pos % c->peer.ring_size;
        uint64_t piece = std::min<uint64_t>(n - done, seg - pos % seg);
        ibv_send_wr &wr = wrs[count];
        wr = ibv_send_wr{};
        uint64_t local = c->tx.posted + done;
        int nsge = 0;
        uint64_t got = 0;
        while (got < piece) {
            uint64_t chunk = 0;
            uint32_t lkey = 0;
            uint8_t *at = tx_span(c, local + got, &lkey, &chunk, piece - got);
            sges[count][nsge].addr = reinterpret_cast<uint64_t>(at);
            sges[count][nsge].length = static_cast<uint32_t>(chunk);
            sges[count][nsge].lkey = lkey;
            ++nsge;
            got += chunk;
        }
        uint64_t g = pos / seg; // the peer's cumulative segment
        wr.sg_list = sges[count];
        wr.num_sge = nsge;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.wr.rdma.remote_addr = c->peer.ring_addr + roff;
        wr.wr.rdma.rkey = segment_rkey(c->remote.rkeys[g % kRingSegments], g / kRingSegments);
        wr.wr_id = make_wr_id(c->serial, WrKind::Data, 0);
        if (piece <= inline_max) wr.send_flags = IBV_SEND_INLINE;
        if (count) wrs[count - 1].next = &wr;
        ++count;
        done += piece;
    }
    return count;
}

/// Post data from the TX ring; returns true when everything accepted is posted.
bool pump_data(tw_conn *c)
{
    // Nothing to write into before the peer named its ring (RING).
    while (c->tx.posted < c->tx.head && !c->error && c->remote.known && !c->sq.window_wait) {
        uint64_t r_free = peer_ring_free(c);
        if (!credits_allow_data(c, r_free)) return false;
        if (sq_free(c) < 3) return false; // keep room for a control message
        c->credits.stalled = false;
        // One message for everything accepted: each message costs the peer a
        // completion and, every quarter ring, a CREDIT, and on rxe those
        // costs, not bytes in flight, bound the rate (splitting 64 KiB writes
        // into quarter-ring messages halved 64 KiB streaming, docs/benchmarks.md).
        // Each segment of the peer's ring has its own window, so one WRITE
        // per segment touched: at most kMaxPieces, one SQ entry kept free.
        const uint64_t seg = c->peer.ring_size / kRingSegments;
        const uint32_t pieces = std::min<uint32_t>(kMaxPieces, sq_free(c) - 1);
        uint64_t reach = seg - (c->remote.written - c->remote.base) % seg + uint64_t(pieces - 1) * seg;
        uint64_t n = std::min<uint64_t>({c->tx.head - c->tx.posted, r_free, kImmMaxLen, reach});
        // A message never spans two TX rings (after tx_grow, the old one drains first).
        if (c->tx.old.size && c->tx.posted < c->tx.old_end) n = std::min(n, c->tx.old_end - c->tx.posted);
        // More waits than the peer's ring holds now: say so (version 4), the
        // receiver's cue to offer a larger ring.
        bool more = c->version >= kProtoResize && n == r_free && c->tx.head - c->tx.posted > n;
        // Filled per piece used: zeroing all four requests costs more than
        // the small message they usually carry.
        ibv_send_wr wrs[kMaxPieces];
        ibv_sge sges[kMaxPieces][2];
        uint32_t count = build_data_writes(c, n, seg, wrs, sges);
        ibv_send_wr &last = wrs[count - 1];
        last.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        uint32_t credits = take_owed(c, kImmMaxCredits);
        last.imm_data = htonl(imm_encode(credits, static_cast<uint32_t>(n), more ? kImmTypeDataMore : kImmTypeData));
        c->tx.posted += n;
        c->remote.written += n;
        c->credits.send -= 1;
        if (!post_chain(c, &wrs[0], &last, count, false)) return false;
        c->stats.bytes_sent += n;
        c->stats.messages_sent += 1;
        c->resize.last_data_ns = now_ns(c->loop->t);
    }
    return c->tx.posted == c->tx.head;
}

/// A CREDIT that returns at least half our receives may use the peer's last
/// receive; anything else leaves one free for such a CREDIT.  So the two
/// ends can never both sit at zero credits while owing each other.
bool control_allowed(const tw_conn *c, Ctrl type)
{
    bool big_return = owed_total(c) * 2 >= cfg(c).recv_depth;
    uint32_t need = (type == Ctrl::Credit && big_return) ? 1 : 2;
    return c->credits.send >= need;
}

void pump_control(tw_conn *c, bool data_all_posted)
{
    while (!c->error && !c->sq.window_wait && sq_free(c) >= 1 &&
           c->sq.ctrl_posted - c->sq.ctrl_done < Settings::kCtrlSlots) {
        if (owes(c, kOweRing) && control_allowed(c, Ctrl::Ring)) {
            settle(c, kOweRing);
            if (!send_ctrl(c, Ctrl::Ring, false)) return;
        } else if (owes(c, kOweResizeAck) && control_allowed(c, Ctrl::ResizeAck)) {
            // Every byte written so far went to the old ring; the rest go
            // to the new one, which RESIZE named.
            settle(c, kOweResizeAck);
            if (!send_ctrl(c, Ctrl::ResizeAck, false)) return;
            resize_switch_peer_ring(c);
        } else if (c->resize.state == Resize::Offering && control_allowed(c, Ctrl::Resize)) {
            c->resize.state = Resize::Offered;
            if (!send_ctrl(c, Ctrl::Resize, false)) return;
        } else if (owes(c, kOweKeepaliveAck) && control_allowed(c, Ctrl::KeepaliveAck)) {
            settle(c, kOweKeepaliveAck);
            if (!send_ctrl(c, Ctrl::KeepaliveAck, false)) return;
        } else if (owes(c, kOweCredit) && control_allowed(c, Ctrl::Credit)) {
            settle(c, kOweCredit);
            if (!send_ctrl(c, Ctrl::Credit, false)) return;
        } else if (owes(c, kOweKeepalive) && control_allowed(c, Ctrl::Keepalive)) {
            settle(c, kOweKeepalive);
            if (!send_ctrl(c, Ctrl::Keepalive, false)) return;
        } else if (owes(c, kOweShutdown) && data_all_posted && !reached(c, kShutdownSent) &&
                   control_allowed(c, Ctrl::Shutdown)) {
            settle(c, kOweShutdown);
            mark_reached(c, kShutdownSent);
            if (!send_ctrl(c, Ctrl::Shutdown, true)) return;
            c->sq.shutdown_seq = c->sq.wr_posted;
        } else {
            break;
        }
    }
}

/// Report consumed ring space every quarter ring, and return receives once
/// half of them wait (whatever consumed them: data or control).
void check_credit_report(tw_conn *c)
{
    if ((reportable_consumed(c) - c->rx.reported) * 4 >= c->rx.size || owed_total(c) * 2 >= cfg(c).recv_depth)
        owe(c, kOweCredit);
}

void bad_frame(tw_conn *c, const std::string &what)
{
    conn_fail(c, -TW_EBADFRAME, "malformed message from " + c->peer_text + ": " + what + "; the connection is closed");
}

bool add_credits(tw_conn *c, uint32_t credits)
{
    if (uint64_t(c->credits.send) + credits > c->peer.recv_depth) {
        bad_frame(c, format("returned %u credits with %u outstanding, more than the %u receives it posted", credits,
                            c->credits.send, c->peer.recv_depth));
        return false;
    }
    c->credits.send += credits;
    return true;
}

void on_data(tw_conn *c, uint32_t imm_host, uint64_t now)
{
    Imm imm = imm_decode(imm_host);
    if (imm.type != kImmTypeData && !(imm.type == kImmTypeDataMore && c->version >= kProtoResize))
        return bad_frame(c, format("immediate of unknown type %u", imm.type));
    if (imm.len == 0) return bad_frame(c, "data write of length 0");
    if (c->rx.peer_eof) return bad_frame(c, "data after SHUTDOWN");
    // Bytes before grant.base are in the previous ring, not this one.
    if (c->rx.tail + imm.len - std::max(c->rx.reported, c->grant.base) > c->rx.size)
        return bad_frame(c, format("data write of %u bytes overflows the receive ring", imm.len));
    c->resize.peer_waiting = imm.type == kImmTypeDataMore;
    c->resize.last_data_ns = now;
    if (!add_credits(c, imm.credits)) return;
    c->rx.tail += imm.len;
    c->stats.bytes_received += imm.len;
    c->stats.messages_received += 1;
    if (reached(c, kHostClosed)) {
        // Data for a closed connection: reset it, as TCP does.
        conn_fail(c, -ECONNRESET, "data arrived after close");
        return;
    }
    if (c->rx.rd_shut) c->rx.head = c->rx.tail; // nobody will read: free the ring
    mark_ready(c);
}

void on_ctrl(tw_conn *c, const uint8_t *buf, uint32_t len)
{
    WireCtrl m{};
    std::string why = ctrl_from_wire(buf, len, c->version, &m);
    if (!why.empty()) return bad_frame(c, why);
    c->stats.control_received += 1;
    if (m.consumed < c->remote.consumed || m.consumed > c->remote.written)
        return bad_frame(c, format("%s reports %llu bytes consumed, outside %llu..%llu", ctrl_name(m.type),
                                   static_cast<unsigned long long>(m.consumed),
                                   static_cast<unsigned long long>(c->remote.consumed),
                                   static_cast<unsigned long long>(c->remote.written)));
    if (!add_credits(c, m.credits)) return;
    c->remote.consumed = m.consumed;
    switch (static_cast<Ctrl>(m.type)) {
    case Ctrl::Credit:
        break;
    case Ctrl::Shutdown:
        if (m.sent != c->rx.tail)
            return bad_frame(c, format("SHUTDOWN after %llu bytes, but %llu arrived",
                                       static_cast<unsigned long long>(m.sent),
                                       static_cast<unsigned long long>(c->rx.tail)));
        c->rx.peer_eof = true;
        break;
    case Ctrl::Keepalive:
        owe(c, kOweKeepaliveAck);
        break;
    case Ctrl::KeepaliveAck:
        break;
    case Ctrl::Ring:
        if (c->remote.known) return bad_frame(c, "a second RING (the ring is named once)");
        ring_keys_from_wire(buf, c->remote.rkeys);
        c->peer.ring_addr = m.sent;
        c->remote.known = true;
        break;
    case Ctrl::Resize:
        resize_on_offer(c, m, buf);
        if (c->error) return;
        break;
    case Ctrl::ResizeAck:
        resize_on_ack(c, m);
        if (c->error) return;
        break;
    }
    mark_ready(c);
}

void on_send_done(tw_conn *c)
{
    if (c->sq.marks.empty()) return;
    SignalMark m = c->sq.marks.front();
    c->sq.marks.pop_front();
    c->sq.wr_done = m.wr_seq;
    c->tx.done = std::max(c->tx.done, m.tx_end);
    c->sq.ctrl_done = std::max(c->sq.ctrl_done, m.ctrl_end);
    // Marks posted before a ring switch count binds of the previous ring.
    if (m.grant_gen == c->grant.gen) c->grant.binds_done = std::max(c->grant.binds_done, m.binds_end);
    if (!c->ring_named && c->grant.binds_done >= kRingSegments) {
        // Every window is bound: name the ring to the peer.
        c->ring_named = true;
        owe(c, kOweRing);
    }
    if (reached(c, kShutdownSent) && !reached(c, kShutdownAcked) && c->sq.wr_done >= c->sq.shutdown_seq)
        mark_reached(c, kShutdownAcked);
    mark_ready(c);
}

} // namespace

void conn_bind_ring(tw_conn *c)
{
    RingGrant &g = c->grant;
    if (!g.mw[0] || g.binds_posted) return;
    // Every segment is free: bind them all (the last signalled: its
    // completion covers the others), RING once it completed.
    ibv_send_wr wrs[kRingSegments];
    for (uint32_t i = 0; i < kRingSegments; ++i) wrs[i] = grant_bind_wr(c, g, i);
    link_chain(wrs, kRingSegments);
    g.binds_posted = kRingSegments;
    if (!post_chain(c, &wrs[0], &wrs[kRingSegments - 1], kRingSegments, true)) return;
    for (uint32_t i = 0; i < kRingSegments; ++i) grant_bind_posted(g, i);
}

uint64_t reportable_consumed(const tw_conn *c)
{
    // Bytes of a previous ring: the peer never writes it again.
    if (c->rx.head <= c->grant.base) return c->rx.head;
    const RingGrant &g = c->grant;
    if (g.binds_done < kRingSegments) return c->grant.base;
    return c->grant.base + std::min(c->rx.head - c->grant.base, g.binds_done * g.seg - c->rx.size);
}

namespace {

/// Withdraw the windows of segments the peer filled (their bytes wait to be
/// read), and bind again those the application consumed, for the next lap:
/// one chain, invalidations first, once the remote operations before it
/// completed (window_ops_allowed).  Before data, leaving one SQ entry for
/// control.
void pump_grants(tw_conn *c)
{
    RingGrant &g = c->grant;
    if (g.binds_posted < kRingSegments) return;
    // Positions in this ring (the stream's bytes from grant.base on).
    const uint64_t tail = c->rx.tail - c->grant.base;
    const uint64_t head = c->rx.head > c->grant.base ? c->rx.head - c->grant.base : 0;
    auto invalidate_due = [&](uint64_t inv) { return inv < g.binds_posted && (inv + 1) * g.seg <= tail; };
    // Segment b's previous lap (b - 8) must be invalidated and consumed.
    auto bind_due = [&](uint64_t inv, uint64_t b) {
        return b < inv + kRingSegments && (b + 1) * g.seg <= head + c->rx.size;
    };
    if (!invalidate_due(g.invalidated) && !bind_due(g.invalidated, g.binds_posted)) return;
    if (sq_free(c) < 2 || !window_ops_allowed(c)) return;
    ibv_send_wr wrs[2 * kRingSegments];
    uint32_t n = 0;
    uint64_t inv = g.invalidated, b = g.binds_posted;
    while (invalidate_due(inv) && n < kRingSegments && sq_free(c) >= n + 2) wrs[n++] = grant_invalidate_wr(c, g, inv++);
    while (bind_due(inv, b) && n < 2 * kRingSegments && sq_free(c) >= n + 2) wrs[n++] = grant_bind_wr(c, g, b++);
    if (n == 0) return;
    link_chain(wrs, n);
    uint64_t first_bind = g.binds_posted;
    g.invalidated = inv;
    g.binds_posted = b;
    // Signalled when it binds: a bind's completion lets the peer use its
    // segment.
    if (!post_chain(c, &wrs[0], &wrs[n - 1], n, b > first_bind)) return;
    for (uint64_t i = first_bind; i < b; ++i) grant_bind_posted(g, i);
}

} // namespace

void conn_pump(tw_conn *c)
{
    if (c->state != ConnState::Established || c->error || !c->res.qp) return;
    c->sq.window_wait = false; // set again below while window operations wait
    pump_grants(c);
    if (c->error) return;
    resize_pump(c);
    if (c->error) return;
    if (c->rma) {
        rma_post_binds(c);
        if (c->error) return;
        rma_post_invalidations(c);
    }
    if (c->error) return;
    check_credit_report(c);
    bool all_posted = pump_data(c);
    pump_control(c, all_posted);
    // Control first may have freed nothing for data; data again if credits
    // allow (cheap: returns at once when nothing is pending).
    if (!all_posted && !c->error) pump_data(c);
    rma_pump(c);
}

namespace {

/// A completion that failed, on either queue.
void on_failed_wc(tw_conn *c, const ibv_wc &wc, WrKind kind)
{
    if (wc.status == IBV_WC_RNR_RETRY_EXC_ERR) c->stats.rnr_retries += 1;
    const char *what = kind == WrKind::Recv            ? "RECV"
                       : kind == WrKind::Ctrl          ? "SEND (control)"
                       : kind == WrKind::Bind          ? "BIND_MW (receive ring window)"
                       : kind == WrKind::Invalidate    ? "LOCAL_INV (receive ring window)"
                       : kind == WrKind::Rma           ? rma_wc_what(c, wc)
                       : kind == WrKind::RmaBind       ? "BIND_MW (rma_expose)"
                       : kind == WrKind::RmaInvalidate ? "LOCAL_INV (rma_revoke)"
                                                       : "RDMA_WRITE";
    // Flushes after we (or the peer) ended the connection say nothing
    // new; another error may say why the peer ended it (a disconnect
    // can be handled before the completion that explains it).
    if (c->error || (wc.status == IBV_WC_WR_FLUSH_ERR && reached(c, kDisconnected))) {
        if (wc.status != IBV_WC_WR_FLUSH_ERR)
            logf(c->loop->t, TW_LOG_DEBUG, "connection %s, after it ended: %s", c->peer_text.c_str(),
                 wc_failed(wc, what).c_str());
        return;
    }
    // A receive flushed while RMA is in flight: the send queue's own
    // completion (a refusal, or a flush) follows and says why.
    if (wc.status == IBV_WC_WR_FLUSH_ERR && kind == WrKind::Recv && rma_in_flight(c)) return;
    if (kind == WrKind::Rma && rma_wc_status(c, wc) == -TW_EREMOTEACCESS) {
        conn_fail(c, -TW_EWC,
                  "connection " + c->peer_text + ": " + wc_failed(wc, rma_wc_what(c, wc)) +
                      " (the peer's window refused it: outside the exposure, a mode it was not exposed for, "
                      "revoked, or another connection's; an RC queue pair does not survive a remote access "
                      "error, so the connection is closed)");
        if (reached(c, kHostClosed)) conn_check_linger(c);
        return;
    }
    conn_fail(c, -TW_EWC, "connection " + c->peer_text + ": " + wc_failed(wc, what));
    if (reached(c, kHostClosed)) conn_check_linger(c);
}

/// What follows any successful completion: post what it allowed.
void after_completion(tw_conn *c, bool data)
{
    // Data for a connection whose callback is about to run: the pump at
    // its end (deliver()) does this one's work too, and carries the
    // credits owed for this message on the reply.
    if (data && c->host.in_ready && deliverable(c)) {
        c->host.pump_due = true;
        return;
    }
    conn_pump(c);
    if (reached(c, kHostClosed)) conn_check_linger(c);
}

} // namespace

void conn_on_recv(tw_conn *c, const ibv_wc &wc, const uint8_t *buf, uint64_t now)
{
    if (wc.status != IBV_WC_SUCCESS) return on_failed_wc(c, wc, WrKind::Recv);
    c->live.last_rx_ns = now;
    if (c->error) return;
    // The receive came from the shared queue, which holds recv_depth for
    // each connection: a peer past its credits takes receives promised to
    // other connections' peers, so it is cut off at the first.
    if (owed_total(c) >= cfg(c).recv_depth)
        return bad_frame(
            c, format("a message past its credits (all %u receives it was given are in use)", cfg(c).recv_depth));
    bool data = wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM;
    if (data) on_data(c, ntohl(wc.imm_data), now);
    else on_ctrl(c, buf, wc.byte_len);
    if (c->error) return;
    // The caller reposts the buffer: the peer may use it again once told.
    if (data) c->credits.owed_data += 1;
    else c->credits.owed_ctrl += 1;
    after_completion(c, data);
}

void conn_on_wc(tw_conn *c, const ibv_wc &wc, uint64_t now)
{
    auto kind = static_cast<WrKind>((wc.wr_id >> 24) & 0xff);
    if (wc.status != IBV_WC_SUCCESS) return on_failed_wc(c, wc, kind);
    c->live.last_rx_ns = now;
    if (kind == WrKind::RmaInvalidate) rma_on_invalidated(c);
    on_send_done(c);
    rma_on_send_done(c);
    after_completion(c, false);
}

/// After a read or write: pump now, or at the end of the connection's
/// callback when the operation came from it (deliver() pumps then).
static void pump_after_op(tw_conn *c)
{
    if (c->host.in_callback) c->host.pump_due = true;
    else conn_pump(c);
}

static int not_ready(const tw_conn *c)
{
    if (c->error) return c->error;
    if (c->state == ConnState::Finished) return -ENOTCONN;
    return -EAGAIN;
}

ssize_t conn_read(tw_conn *c, const iovec *iov, int iovcnt)
{
    if (c->rx.borrowed) return -EBUSY;
    if (c->state != ConnState::Established && c->rx.tail == c->rx.head) return not_ready(c);
    uint64_t avail = c->rx.tail - c->rx.head;
    if (avail == 0) {
        if (c->rx.peer_eof || c->rx.rd_shut) return 0;
        return c->error ? c->error : -EAGAIN;
    }
    uint64_t total = 0;
    for (int i = 0; i < iovcnt && total < avail; ++i) {
        uint64_t want = std::min<uint64_t>(iov[i].iov_len, avail - total);
        uint64_t done = 0;
        while (done < want) {
            uint64_t chunk = 0;
            const uint8_t *at = rx_span(c, c->rx.head + total + done, &chunk, want - done);
            std::memcpy(static_cast<uint8_t *>(iov[i].iov_base) + done, at, chunk);
            done += chunk;
        }
        total += want;
    }
    c->rx.head += total;
    pump_after_op(c);
    return static_cast<ssize_t>(total);
}

ssize_t conn_write(tw_conn *c, const iovec *iov, int iovcnt)
{
    if (c->state != ConnState::Established) return not_ready(c);
    if (c->error) return c->error;
    if (c->tx.wr_shut) {
        c->last_error = "write after shutdown(SHUT_WR) on this connection";
        return -EPIPE;
    }
    if (c->tx.write_error) return c->tx.write_error;
    if (c->tx.sendbuf_out) return -EBUSY;
    size_t want = 0;
    for (int i = 0; i < iovcnt; ++i) want += iov[i].iov_len;
    if (want == 0) return 0;
    uint64_t total = 0;
    for (int i = 0; i < iovcnt; ++i) {
        uint64_t len = iov[i].iov_len;
        uint64_t done = 0;
        while (done < len) {
            // A full ring of bytes in flight: a larger one, when allowed.
            if (tx_space(c) == 0) {
                conn_pump(c); // post what the ring holds: are its bytes in flight?
                if (c->error) return c->error;
                if (!tx_grow(c, 0)) break;
            }
            uint64_t chunk = 0;
            uint32_t lkey = 0;
            uint8_t *at = tx_span(c, c->tx.head, &lkey, &chunk, std::min(len - done, tx_space(c)));
            std::memcpy(at, static_cast<const uint8_t *>(iov[i].iov_base) + done, chunk);
            done += chunk;
            c->tx.head += chunk;
        }
        total += done;
        if (done < len) break;
    }
    if (total < want) {
        // Full: post now, and ask for the completion that frees room.
        c->stats.write_would_block += 1;
        conn_pump(c);
        post_fence(c);
    } else {
        pump_after_op(c);
    }
    if (total == 0) return -EAGAIN;
    return static_cast<ssize_t>(total);
}

int conn_shutdown(tw_conn *c, int how)
{
    if (how != SHUT_WR && how != SHUT_RD && how != SHUT_RDWR) return -EINVAL;
    if (c->state != ConnState::Established) return c->error ? c->error : -ENOTCONN;
    if (how == SHUT_RD || how == SHUT_RDWR) {
        c->rx.rd_shut = true;
        c->rx.head = c->rx.tail;
        mark_ready(c);
    }
    if ((how == SHUT_WR || how == SHUT_RDWR) && !c->tx.wr_shut) {
        c->tx.wr_shut = true;
        owe(c, kOweShutdown);
    }
    conn_pump(c);
    return 0;
}

int conn_send_buf_get(tw_conn *c, size_t min_len, tw_buf *out)
{
    if (c->state != ConnState::Established) return not_ready(c);
    if (c->error) return c->error;
    if (c->tx.wr_shut) return -EPIPE;
    if (c->tx.write_error) return c->tx.write_error;
    if (c->tx.sendbuf_out) return -EBUSY;
    if (min_len > std::max<uint64_t>(cfg(c).send_buffer_max, c->tx.size)) return -EMSGSIZE;
    auto contiguous_now = [c] {
        uint64_t off = (c->tx.head - c->tx.ring.base) % c->tx.size;
        return std::min(tx_space(c), c->tx.size - off);
    };
    uint64_t contiguous = contiguous_now();
    uint64_t off = (c->tx.head - c->tx.ring.base) % c->tx.size;
    if (contiguous < min_len && c->tx.done == c->tx.head && off != 0 && min_len <= c->tx.size) {
        // Idle ring: nothing in flight refers to it, so skip to its start.
        uint64_t skip = c->tx.size - off;
        c->tx.head += skip;
        c->tx.posted += skip;
        c->tx.done += skip;
        for (auto &m : c->sq.marks) m.tx_end = std::max(m.tx_end, c->tx.done);
        contiguous = c->tx.size;
    }
    // A ring full of bytes in flight, or smaller than the buffer asked for:
    // a larger one, when allowed.
    if ((contiguous == 0 || contiguous < min_len) && tx_grow(c, min_len)) contiguous = contiguous_now();
    if (contiguous == 0 || contiguous < min_len) {
        c->stats.write_would_block += 1;
        post_fence(c);
        return -EAGAIN;
    }
    uint32_t lkey = 0;
    out->data = tx_span(c, c->tx.head, &lkey, &contiguous, contiguous);
    out->cap = contiguous;
    out->len = 0;
    out->token = c->tx.head;
    c->tx.sendbuf_out = true;
    return 0;
}

int conn_send_buf_submit(tw_conn *c, tw_buf *buf)
{
    if (!c->tx.sendbuf_out || !buf || buf->token != c->tx.head) return -EINVAL;
    if (buf->len > buf->cap) return -EINVAL;
    c->tx.sendbuf_out = false;
    if (c->error) return c->error;
    if (buf->len == 0) return 0;
    c->tx.head += buf->len;
    c->stats.zero_copy_sends += 1;
    conn_pump(c);
    return 0;
}

int conn_recv_buf_borrow(tw_conn *c, tw_buf *out)
{
    if (c->rx.borrowed) return -EBUSY;
    if (c->state != ConnState::Established && c->rx.tail == c->rx.head) return not_ready(c);
    uint64_t avail = c->rx.tail - c->rx.head;
    if (avail == 0) {
        if (c->rx.peer_eof || c->rx.rd_shut) {
            out->data = nullptr;
            out->len = out->cap = 0;
            out->token = c->rx.head;
            return 0;
        }
        return c->error ? c->error : -EAGAIN;
    }
    uint64_t len = 0;
    out->data = rx_span(c, c->rx.head, &len, avail);
    out->len = out->cap = len;
    out->token = c->rx.head;
    c->rx.borrowed = true;
    c->stats.zero_copy_recvs += 1;
    return 0;
}

int conn_recv_buf_return(tw_conn *c, tw_buf *buf, size_t consumed)
{
    if (!c->rx.borrowed || !buf || buf->token != c->rx.head || consumed > buf->len) return -EINVAL;
    c->rx.borrowed = false;
    c->rx.head += consumed;
    mark_ready(c);
    conn_pump(c);
    return 0;
}

} // namespace twrdma
