// SPDX-License-Identifier: MIT
#include "fake_verbs.hpp"

#include <arpa/inet.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace twrdma {
// conn_setup.cpp's two entry points the data path calls, reduced to what
// they do to the connection's state (no rdma_cm here).
void conn_fail(tw_conn *c, int code, const std::string &text)
{
    if (c->error) return;
    c->error = code;
    c->last_error = text;
    c->host.error_pending = true;
    mark_reached(c, kDisconnected); // conn_fail disconnects an established QP
    mark_ready(c);
}
void conn_check_linger(tw_conn *) {}
// No pool here (ldev->pool is null), so rings never grow: nothing to register.
void refill_soon(tw_transport_loop *) {}
// No device events are read here (device_events.cpp is linked for describe).
void device_lost(tw_transport_loop *, Device *, const std::string &) {}
void reap_now(tw_transport_loop *) {}
} // namespace twrdma

namespace twfuzz {
using namespace twrdma;

namespace {

Pair *g_pair = nullptr; // the pair the fake ops and clock belong to

uint64_t fake_now(const tw_host *) { return g_pair ? g_pair->clock_ns : 0; }
int fake_log_enabled(const tw_host *, int) { return 0; }
void fake_log(const tw_host *, int, const char *, ...) {}

Side &side_of(ibv_qp *qp)
{
    if (qp == &g_pair->a.qp) return g_pair->a;
    if (qp == &g_pair->b.qp) return g_pair->b;
    broken("a work request on an unknown QP");
}

bool in_region(const ibv_sge &sge, const uint8_t *base, size_t len)
{
    auto *p = reinterpret_cast<const uint8_t *>(sge.addr);
    return p >= base && p + sge.length <= base + len && sge.length <= len;
}

int fake_post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad)
{
    Side &s = side_of(qp);
    const Settings &cfg = s.transport.cfg;
    for (; wr; wr = wr->next) {
        if (s.sq_posted - s.sq_retired >= cfg.sq_depth) {
            *bad = wr;
            broken(s.name + ": posted more send WRs than the send queue holds (SQ accounting)");
        }
        WireWr w;
        w.wr_id = wr->wr_id;
        w.opcode = wr->opcode;
        w.signalled = wr->send_flags & IBV_SEND_SIGNALED;
        w.imm_net = wr->imm_data;
        w.remote_addr = wr->wr.rdma.remote_addr;
        w.rkey = wr->wr.rdma.rkey;
        w.is_inline = wr->send_flags & IBV_SEND_INLINE;
        if (wr->opcode == IBV_WR_BIND_MW) {
            w.mw = wr->bind_mw.mw;
            w.rkey = wr->bind_mw.rkey;
            w.bind_addr = wr->bind_mw.bind_info.addr;
            w.bind_len = wr->bind_mw.bind_info.length;
            expect(w.mw >= s.mws && w.mw < s.mws + kRingSegments, s.name, "bind of a window not ours");
        } else if (wr->opcode == IBV_WR_LOCAL_INV) {
            w.rkey = wr->invalidate_rkey;
        }
        size_t total = 0;
        for (int i = 0; i < wr->num_sge; ++i) {
            const ibv_sge &sge = wr->sg_list[i];
            total += sge.length;
            expect(sge.lkey == s.block.lkey, s.name, "SGE with a foreign lkey");
            bool ok = wr->opcode == IBV_WR_SEND ? in_region(sge, s.ctrl_bufs.get(), Settings::kCtrlSlots * kRecvBufSize)
                                                : in_region(sge, s.tx.get(), s.c->tx.size);
            expect(ok, s.name, "SGE outside the registered TX ring / control slots");
            if (w.is_inline) w.inline_data.append(reinterpret_cast<const char *>(sge.addr), sge.length);
            else w.sges.push_back(sge);
        }
        if (w.is_inline) expect(total <= s.ldev.max_inline, s.name, "inline send larger than max_inline");
        w.seq = ++s.sq_posted;
        s.sq.push_back(std::move(w));
    }
    return 0;
}

ibv_context g_ctx = [] {
    ibv_context ctx{};
    ctx.ops.post_send = fake_post_send;
    return ctx;
}();

tw_host g_host = [] {
    tw_host h{};
    h.log = fake_log;
    h.log_enabled = fake_log_enabled;
    h.now_ns = fake_now;
    return h;
}();

void init_side(Side &s, const char *name, const Shape &shape, uint32_t key)
{
    s.name = name;
    Settings &cfg = s.transport.cfg;
    cfg.ring_size = shape.ring_size;
    cfg.send_buffer_size = shape.tx_size;
    cfg.recv_depth = shape.recv_depth;
    cfg.control_credits = shape.control_credits;
    cfg.sq_depth = shape.sq_depth;
    s.transport.host = &g_host;
    s.loop.t = &s.transport;
    s.loop.host = &g_host;
    s.ldev.loop = &s.loop;
    s.ldev.max_inline = shape.max_inline;
    s.rx.reset(new uint8_t[shape.ring_size]());
    s.tx.reset(new uint8_t[shape.tx_size]());
    s.recv_bufs.reset(new uint8_t[size_t(shape.recv_depth) * kRecvBufSize]());
    s.ctrl_bufs.reset(new uint8_t[Settings::kCtrlSlots * kRecvBufSize]());
    s.block.lkey = key;
    s.qp.context = &g_ctx;

    tw_conn *c = new tw_conn;
    s.c = c;
    c->loop = &s.loop;
    c->stats.size = sizeof c->stats;
    c->peer_text = name;
    c->state = ConnState::Established;
    mark_reached(c, kWasEstablished);
    c->serial = key;
    c->res.qp = &s.qp;
    c->res.ldev = &s.ldev;
    c->res.block = &s.block;
    c->version = kProtoMax;
    c->rx.mem = s.rx.get();
    c->rx.size = shape.ring_size;
    c->tx.mem = s.tx.get();
    c->tx.size = shape.tx_size;
    c->tx.ring = TxRing{c->tx.mem, c->tx.size, key, nullptr, 0};
    c->grant.mem = c->rx.mem;
    c->grant.size = c->rx.size;
    c->sq.ctrl_bufs = s.ctrl_bufs.get();
    // Every segment window is bound (conn_bind_ring's work, no real MW
    // here): RING names them next.
    c->grant.seg = shape.ring_size / kRingSegments;
    for (uint32_t i = 0; i < kRingSegments; ++i) {
        uint32_t first = ((key + i) << 8) | 0x10;
        c->grant.mw[i] = &s.mws[i];
        c->grant.lap0_rkey[i] = first;
        s.mws[i].rkey = first;
        s.windows[i] = FakeWindow{true, first, reinterpret_cast<uint64_t>(c->rx.mem) + i * c->grant.seg, c->grant.seg};
    }
    c->grant.binds_posted = c->grant.binds_done = kRingSegments;
    c->ring_named = true;
    owe(c, kOweRing);
}

} // namespace

Side::~Side() { delete c; }

void pair_init(Pair &p, const Shape &shape)
{
    g_pair = &p;
    init_side(p.a, "a", shape, 0x100);
    init_side(p.b, "b", shape, 0x200);
    for (Side *s : {&p.a, &p.b}) {
        Side &o = peer_of(p, *s);
        // What the peer's hello said (conn_setup.cpp: apply_peer); where
        // its ring is comes in its RING message.
        s->c->peer.ring_size = shape.ring_size;
        s->c->peer.recv_depth = static_cast<uint16_t>(shape.recv_depth);
        s->c->peer.credit_reserve = static_cast<uint16_t>(shape.control_credits);
        s->c->credits.send = shape.recv_depth;
        s->c->live.last_rx_ns = p.clock_ns;
        // Its share of the shared receive queue, posted before the handshake.
        for (uint32_t i = 0; i < shape.recv_depth; ++i) s->recvs.push_back(i);
    }
    for (Side *s : {&p.a, &p.b}) conn_pump(s->c); // each posts its RING
}

Side &peer_of(Pair &p, Side &s) { return &s == &p.a ? p.b : p.a; }

namespace {

void complete(Side &s, const WireWr &w, ibv_wc_status status, ibv_wc_opcode op)
{
    ibv_wc wc{};
    wc.wr_id = w.wr_id;
    wc.status = status;
    wc.opcode = op;
    s.cq.push_back(wc);
    s.cq_seq.push_back(w.seq);
}

/// The QP broke: every WR still queued completes in error (a flush).
void flush_sq(Side &s)
{
    s.qp_error = true;
    while (!s.sq.empty()) {
        complete(s, s.sq.front(), IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND);
        s.sq.pop_front();
    }
}

/// Copy a WR's payload as the device reads it now.
std::string payload_of(const WireWr &w)
{
    if (w.is_inline) return w.inline_data;
    std::string out;
    for (const ibv_sge &sge : w.sges) out.append(reinterpret_cast<const char *>(sge.addr), sge.length);
    return out;
}

uint64_t wr_bytes(const WireWr &w)
{
    if (w.is_inline) return w.inline_data.size();
    uint64_t n = 0;
    for (const ibv_sge &sge : w.sges) n += sge.length;
    return n;
}

bool trusted(Pair &p) { return !p.a.tainted && !p.b.tainted; }

} // namespace

bool deliver_one(Pair &p, Side &from)
{
    if (from.sq.empty()) return false;
    Side &to = peer_of(p, from);
    WireWr w = std::move(from.sq.front());
    from.sq.pop_front();
    std::string data = payload_of(w);
    bool honest = trusted(p);
    if (w.opcode == IBV_WR_BIND_MW || w.opcode == IBV_WR_LOCAL_INV) {
        // Local operations on our own windows, in send-queue order.
        bool bind = w.opcode == IBV_WR_BIND_MW;
        FakeWindow *win = nullptr;
        for (FakeWindow &fw : from.windows)
            if (bind ? &fw == &from.windows[w.mw - from.mws] : (fw.bound && fw.rkey == w.rkey)) win = &fw;
        bool ok = win && (bind ? !win->bound : true);
        expect(ok || !honest, from.name, bind ? "bind of a window still bound" : "invalidation of a key not bound");
        if (!ok) {
            complete(from, w, IBV_WC_MW_BIND_ERR, bind ? IBV_WC_BIND_MW : IBV_WC_LOCAL_INV);
            flush_sq(from);
            return true;
        }
        if (bind) *win = FakeWindow{true, w.rkey, w.bind_addr, w.bind_len};
        else win->bound = false;
        if (w.signalled) complete(from, w, IBV_WC_SUCCESS, bind ? IBV_WC_BIND_MW : IBV_WC_LOCAL_INV);
        return true;
    }
    if (w.opcode == IBV_WR_RDMA_WRITE || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
        auto *ring = to.rx.get();
        uint64_t addr = w.remote_addr;
        uint64_t base = reinterpret_cast<uint64_t>(ring);
        // A zero-length WRITE checks no key nor address (IBA C9-88: a fence
        // before the peer named its ring carries 0 for both); any other
        // must fall inside one bound window of the key it names.
        bool inside = data.empty();
        for (const FakeWindow &fw : to.windows)
            if (fw.bound && fw.rkey == w.rkey && addr >= fw.addr && addr + data.size() <= fw.addr + fw.len)
                inside = true;
        if (!inside) {
            // Honest ends never do this; after a hostile RING the peer's
            // device refuses it, as real hardware does.
            expect(!honest, from.name, "RDMA WRITE outside the peer's receive ring");
            complete(from, w, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE);
            flush_sq(from);
            return true;
        }
        if (!data.empty()) {
            if (honest) {
                expect(addr - base == to.landed % to.c->rx.size, from.name, "WRITE lands at the wrong ring offset");
                expect(to.landed + data.size() - to.c->rx.head <= to.c->rx.size, from.name,
                       "WRITE lands over bytes the peer has not read");
            }
            std::memcpy(ring + (addr - base), data.data(), data.size());
            to.landed += data.size();
        }
    }
    bool needs_recv = w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM || w.opcode == IBV_WR_SEND;
    if (needs_recv) {
        if (to.recvs.empty() || to.qp_error) {
            // Receiver not ready: with credits this never happens honestly.
            expect(!honest || to.qp_error, from.name, "message with no receive posted at the peer (RNR)");
            complete(from, w, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND);
            flush_sq(from);
            return true;
        }
        uint32_t index = to.recvs.front();
        to.recvs.pop_front();
        ibv_wc wc{};
        wc.wr_id = make_wr_id(to.c->serial, WrKind::Recv, index);
        wc.status = IBV_WC_SUCCESS;
        if (w.opcode == IBV_WR_SEND) {
            expect(data.size() <= kRecvBufSize, from.name, "SEND larger than a receive buffer");
            std::memcpy(to.recv_bufs.get() + size_t(index) * kRecvBufSize, data.data(), data.size());
            wc.opcode = IBV_WC_RECV;
            wc.byte_len = static_cast<uint32_t>(data.size());
        } else {
            wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
            wc.wc_flags = IBV_WC_WITH_IMM;
            wc.imm_data = w.imm_net;
            wc.byte_len = static_cast<uint32_t>(data.size());
            if (honest) {
                Imm imm = imm_decode(ntohl(w.imm_net));
                expect(imm.len == to.landed - to.landed_at_imm, from.name, "immediate length is not what was written");
            }
            to.landed_at_imm = to.landed;
        }
        to.cq.push_back(wc);
        to.cq_seq.push_back(0);
    }
    if (w.signalled) complete(from, w, IBV_WC_SUCCESS, w.opcode == IBV_WR_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE);
    return true;
}

bool poll_one(Pair &p, Side &s)
{
    if (s.cq.empty()) return false;
    ibv_wc wc = s.cq.front();
    uint64_t seq = s.cq_seq.front();
    s.cq.pop_front();
    s.cq_seq.pop_front();
    // A polled send completion frees its WR and every one before it.
    if (seq && seq > s.sq_retired) s.sq_retired = seq;
    p.clock_ns += 1000;
    if (static_cast<WrKind>((wc.wr_id >> 24) & 0xff) != WrKind::Recv) {
        conn_on_wc(s.c, wc, p.clock_ns);
        return true;
    }
    // A shared receive: handled, then posted again at once (loop.cpp's drain).
    uint32_t index = static_cast<uint32_t>(wc.wr_id & 0xffffff);
    conn_on_recv(s.c, wc, s.recv_bufs.get() + size_t(index) * kRecvBufSize, p.clock_ns);
    if (wc.status == IBV_WC_SUCCESS) {
        for (uint32_t posted : s.recvs) expect(posted != index, s.name, "receive buffer posted twice");
        s.recvs.push_back(index);
    }
    return true;
}

void check_invariants(Pair &p)
{
    for (Side *sp : {&p.a, &p.b}) {
        Side &s = *sp;
        Side &o = peer_of(p, s);
        const tw_conn *c = s.c;
        const Settings &cfg = s.transport.cfg;
        const std::string &n = s.name;
        expect(c->rx.reported <= c->rx.head && c->rx.head <= c->rx.tail, n, "rx.reported <= rx.head <= rx.tail");
        expect(c->rx.tail - c->rx.head <= c->rx.size, n, "unread bytes fit the ring");
        expect(c->tx.done <= c->tx.posted && c->tx.posted <= c->tx.head, n, "tx.done <= tx.posted <= tx.head");
        expect(c->tx.head - c->tx.done <= c->tx.size, n, "staged bytes fit the TX ring");
        expect(c->remote.consumed <= c->remote.written, n, "peer consumed no more than written");
        expect(c->remote.written - c->remote.consumed <= c->peer.ring_size, n, "bytes in the peer's ring fit it");
        expect(c->credits.send <= c->peer.recv_depth, n, "credits within the peer's receives");
        expect(c->sq.wr_done <= c->sq.wr_posted && c->sq.wr_posted - c->sq.wr_done <= cfg.sq_depth, n, "SQ accounting");
        expect(c->sq.ctrl_done <= c->sq.ctrl_posted && c->sq.ctrl_posted - c->sq.ctrl_done <= Settings::kCtrlSlots, n,
               "control slots accounting");
        expect(c->credits.owed_data + c->credits.owed_ctrl <= cfg.recv_depth, n, "owed credits within our receives");
        if (c->error) expect(c->error < 0 && !c->last_error.empty(), n, "an error has a code and a message");
        if (!trusted(p) || o.qp_error || s.qp_error) continue;
        // Between honest ends: never more credits than receives the peer
        // has posted and not yet promised to messages in flight.
        uint64_t in_flight = 0;
        for (const WireWr &w : s.sq)
            if (w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM || w.opcode == IBV_WR_SEND) ++in_flight;
        expect(c->credits.send + in_flight <= o.recvs.size(), n, "credits exceed the peer's posted receives");
        expect(c->remote.consumed <= o.c->rx.head, n, "we think the peer consumed bytes it has not");
        uint64_t writing = 0;
        for (const WireWr &w : s.sq)
            if (w.opcode != IBV_WR_SEND) writing += wr_bytes(w);
        expect(c->remote.written == o.landed + writing, n, "bytes written = landed at the peer + in flight");
    }
}

[[noreturn]] void broken(const std::string &what)
{
    std::fprintf(stderr, "fuzz-rdma-datapath: invariant broken: %s\n", what.c_str());
    std::abort();
}

} // namespace twfuzz
