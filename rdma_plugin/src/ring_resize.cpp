// SPDX-License-Identifier: MIT
// Rings that grow under load and shrink when idle.  A connection starts on
// its block's small rings.  The receive ring grows when the reader drained
// it while the peer said more was waiting (protocol version 4): the
// receiver takes a larger ring from the pool's spares, binds its windows,
// offers it in RESIZE; the peer answers RESIZE_ACK at a stream offset and
// writes the new ring from there.  The old ring's windows are invalidated
// at once, its unread bytes are read in place (nothing is copied), and it
// goes back to the pool once read.  The TX staging ring grows when a write
// finds it full of bytes in flight: new bytes go to a larger ring, the old
// one drains.  Both go back to the block's own rings after
// rdma.ring_idle_ms without data.  Spare rings are registered by the
// loop's tick (Pool::refill), never on the data path: a connection that
// finds none keeps its size until the next try.
#include "core.hpp"

#include "report.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace twrdma {

namespace {

/// Where growth for busy traffic stops (the peer waiting grows it further).
constexpr uint64_t kBusyRing = 64 * 1024;

Pool *pool_of(const tw_conn *c) { return c->res.ldev ? c->res.ldev->pool.get() : nullptr; }

/// Count the receive ring's laps (every segment filled once more); two
/// within rdma.ring_idle_ms mark the connection busy.  A connection idle
/// but for a message now and then never laps that fast.
void note_laps(tw_conn *c)
{
    if (c->grant.invalidated < c->resize.lap_mark + kRingSegments) return;
    uint64_t now = now_ns(c->loop->t);
    if (c->resize.lap_ns && now - c->resize.lap_ns < uint64_t(cfg(c).ring_idle_ms) * 1000000ull) c->resize.busy = true;
    c->resize.lap_mark = c->grant.invalidated;
    c->resize.lap_ns = now;
}

/// The TX ring left by tx_grow, once every byte in it completed.
void tx_release_old(tw_conn *c)
{
    if (!c->tx.old.size || c->tx.done < c->tx.old_end) return;
    if (c->tx.old.spare) pool_of(c)->give_ring(c->tx.old.spare, now_ns(c->loop->t));
    c->tx.old = TxRing{};
}

/// Take a ring of `size` for the receive side and post the binds of its
/// windows; RESIZE follows their completion.
void start_resize(tw_conn *c, uint64_t size)
{
    if (c->resize.next.leaked) return; // a window that could not be withdrawn keeps its ring
    RingGrant &n = c->resize.next;
    SpareRing *spare = nullptr;
    if (size == cfg(c).ring_size) {
        n.mem = c->res.block->ring; // back to the block's own ring
        n.mr = c->res.block->ring_mr;
    } else {
        spare = pool_of(c)->take_ring(size);
        if (!spare) return refill_soon(c->loop); // registered from a timer; asked again at the next drain
        n.mem = spare->mem;
        n.mr = spare->mr;
    }
    n.spare = spare;
    n.size = size;
    std::string why;
    if (grant_prepare(c, n, &why) != 0) {
        logf(c->loop->t, TW_LOG_DEBUG, "connection %s: the receive ring stays at %llu bytes: %s", c->peer_text.c_str(),
             static_cast<unsigned long long>(c->rx.size), why.c_str());
        if (spare) pool_of(c)->give_ring(spare, now_ns(c->loop->t));
        n.mem = nullptr;
        n.spare = nullptr;
        return;
    }
    ibv_send_wr wrs[kRingSegments];
    for (uint32_t i = 0; i < kRingSegments; ++i) wrs[i] = grant_bind_wr(c, n, i);
    link_chain(wrs, kRingSegments);
    n.binds_posted = kRingSegments;
    c->resize.state = Resize::Binding;
    if (!post_chain(c, &wrs[0], &wrs[kRingSegments - 1], kRingSegments, true)) return;
    for (uint32_t i = 0; i < kRingSegments; ++i) grant_bind_posted(n, i);
    c->resize.seq = c->sq.wr_posted;
    logf(c->loop->t, TW_LOG_DEBUG, "connection %s: receive ring %llu -> %llu bytes: binding its windows",
         c->peer_text.c_str(), static_cast<unsigned long long>(c->rx.size), static_cast<unsigned long long>(size));
}

/// Draining: withdraw every window of the old ring still bound, then give
/// the ring back once its bytes were read and the invalidations completed.
void drain_old_ring(tw_conn *c)
{
    RingGrant &o = c->resize.next;
    if (o.invalidated < o.binds_posted) {
        if (sq_free(c) < 2 || !window_ops_allowed(c)) return;
        ibv_send_wr wrs[kRingSegments];
        uint32_t n = 0;
        for (; o.invalidated + n < o.binds_posted && n < kRingSegments && sq_free(c) >= n + 2; ++n)
            wrs[n] = grant_invalidate_wr(c, o, o.invalidated + n);
        link_chain(wrs, n);
        o.invalidated += n;
        bool last = o.invalidated == o.binds_posted;
        if (!post_chain(c, &wrs[0], &wrs[n - 1], n, last)) return;
        if (!last) return;
        c->resize.seq = c->sq.wr_posted;
    }
    if (o.invalidated < o.binds_posted || c->sq.wr_done < c->resize.seq || c->rx.head < c->grant.base) return;
    // The old windows go with their ring: the next ring gets windows that
    // never carried a key of this one.
    if (!grant_revoke(c, o)) {
        c->resize.state = Resize::None;
        if (!o.spare) return; // the block's own ring: kept (no more resizes), retired at teardown
        pool_of(c)->retire_ring(o.spare);
        o.spare = nullptr;
        o.leaked = false;
    }
    logf(c->loop->t, TW_LOG_DEBUG, "connection %s: the old receive ring (%llu bytes) is read and withdrawn",
         c->peer_text.c_str(), static_cast<unsigned long long>(o.size));
    if (o.spare) pool_of(c)->give_ring(o.spare, now_ns(c->loop->t));
    o.mem = nullptr;
    o.spare = nullptr;
    c->resize.state = Resize::None;
}

} // namespace

uint8_t *rx_span(const tw_conn *c, uint64_t pos, uint64_t *len, uint64_t max)
{
    if (!c->rx.salvage.empty()) {
        // The device went: what arrived was copied out of the ring.
        uint64_t off = pos - c->rx.salvage_base;
        *len = std::min<uint64_t>(max, c->rx.salvage.size() - off);
        return const_cast<uint8_t *>(c->rx.salvage.data()) + off;
    }
    if (c->resize.state == Resize::Draining && pos < c->grant.base) {
        // The previous ring holds the stream's bytes up to grant.base.
        const RingGrant &o = c->resize.next;
        uint64_t off = (pos - o.base) % o.size;
        *len = std::min({max, o.size - off, c->grant.base - pos});
        return o.mem + off;
    }
    uint64_t off = (pos - c->grant.base) % c->rx.size;
    *len = std::min(max, c->rx.size - off);
    return c->rx.mem + off;
}

uint64_t tx_space(const tw_conn *c) { return c->tx.size - (c->tx.head - std::max(c->tx.done, c->tx.ring.base)); }

uint8_t *tx_span(const tw_conn *c, uint64_t pos, uint32_t *lkey, uint64_t *len, uint64_t max)
{
    const TxRing &r = c->tx.old.size && pos < c->tx.old_end ? c->tx.old : c->tx.ring;
    uint64_t off = (pos - r.base) % r.size;
    uint64_t end = &r == &c->tx.old ? c->tx.old_end - pos : r.size - off;
    *len = std::min({max, r.size - off, end});
    *lkey = r.lkey;
    return r.mem + off;
}

bool tx_grow(tw_conn *c, uint64_t need)
{
    const Settings &s = cfg(c);
    if (!pool_of(c) || c->tx.sendbuf_out) return false;
    tx_release_old(c);
    if (c->tx.old.size) return false; // one switch at a time
    // Bytes waiting for the peer's ring would only wait in a larger one.
    bool in_flight = (c->tx.posted - c->tx.done) * 2 >= c->tx.size;
    if (!in_flight && need <= c->tx.size) return false;
    uint64_t size = c->tx.size * 4;
    while (size < need) size *= 2;
    size = std::min<uint64_t>(size, s.send_buffer_max);
    if (size <= c->tx.size || size < need) return false;
    SpareRing *spare = pool_of(c)->take_ring(size);
    if (!spare) {
        refill_soon(c->loop); // registered from a timer; asked again at the next full ring
        return false;
    }
    c->tx.old = c->tx.ring;
    c->tx.old_end = c->tx.head;
    c->tx.ring = TxRing{spare->mem, size, spare->mr->lkey, spare, c->tx.head};
    c->tx.mem = spare->mem;
    c->tx.size = size;
    c->resize.tx_grows += 1;
    logf(c->loop->t, TW_LOG_DEBUG, "connection %s: TX ring of %llu bytes from stream offset %llu", c->peer_text.c_str(),
         static_cast<unsigned long long>(size), static_cast<unsigned long long>(c->tx.head));
    return true;
}

void resize_pump(tw_conn *c)
{
    tx_release_old(c);
    if (c->version < kProtoResize || !pool_of(c)) return;
    switch (c->resize.state) {
    case Resize::None: {
        note_laps(c);
        // The reader keeps up and the peer still waits: the ring, not the
        // reader, limits the stream.  Or small messages lap the small
        // first ring: each segment costs a window rebind and each quarter a
        // consumed report, so a busy connection takes a larger one.
        uint64_t cap = c->resize.peer_waiting ? cfg(c).ring_max : std::min<uint64_t>(kBusyRing, cfg(c).ring_max);
        if ((c->resize.peer_waiting || c->resize.busy) && c->rx.head == c->rx.tail && c->rx.size < cap &&
            !c->rx.peer_eof && !c->rx.rd_shut && !reached(c, kHostClosed) && sq_free(c) >= kRingSegments + 2 &&
            window_ops_allowed(c)) {
            c->resize.peer_waiting = false;
            start_resize(c, std::min<uint64_t>(c->rx.size * 4, cap));
            if (c->resize.state != Resize::None) c->resize.busy = false;
        }
        break;
    }
    case Resize::Binding:
        if (c->sq.wr_done >= c->resize.seq) {
            c->resize.next.binds_done = c->resize.next.binds_posted;
            c->resize.state = Resize::Offering; // pump_control sends RESIZE
        }
        break;
    case Resize::Offering:
    case Resize::Offered:
        break;
    case Resize::Draining:
        drain_old_ring(c);
        break;
    }
}

void resize_on_offer(tw_conn *c, const WireCtrl &m, const uint8_t *buf)
{
    uint64_t size = m.rkey;
    const char *bad = !c->remote.known         ? "RESIZE before RING"
                      : owes(c, kOweResizeAck) ? "a second RESIZE before this side's RESIZE_ACK"
                      : (size < kResizeMinRing || size > kResizeMaxRing || (size & (size - 1)))
                          ? "RESIZE to a ring that is not a power of two between 4 KiB and 1 GiB"
                          : nullptr;
    if (bad) {
        conn_fail(c, -TW_EBADFRAME,
                  "malformed message from " + c->peer_text + ": " + bad + "; the connection is closed");
        return;
    }
    ring_keys_from_wire(buf, c->remote.next_rkeys);
    c->remote.next_addr = m.sent;
    c->remote.next_size = size;
    owe(c, kOweResizeAck);
}

void resize_switch_peer_ring(tw_conn *c)
{
    logf(c->loop->t, TW_LOG_DEBUG, "connection %s: writing the peer's new ring of %llu bytes from stream offset %llu",
         c->peer_text.c_str(), static_cast<unsigned long long>(c->remote.next_size),
         static_cast<unsigned long long>(c->remote.written));
    c->peer.ring_addr = c->remote.next_addr;
    c->peer.ring_size = static_cast<uint32_t>(c->remote.next_size);
    std::copy(std::begin(c->remote.next_rkeys), std::end(c->remote.next_rkeys), std::begin(c->remote.rkeys));
    c->remote.base = c->remote.written;
}

void resize_on_ack(tw_conn *c, const WireCtrl &m)
{
    const char *bad = c->resize.state != Resize::Offered ? "RESIZE_ACK without a RESIZE" : nullptr;
    if (!bad && m.sent != c->rx.tail) bad = "RESIZE_ACK at another stream offset than the data that arrived";
    if (bad) {
        conn_fail(c, -TW_EBADFRAME,
                  format("malformed message from %s: %s (offset %llu, %llu bytes arrived); the connection is closed",
                         c->peer_text.c_str(), bad, static_cast<unsigned long long>(m.sent),
                         static_cast<unsigned long long>(c->rx.tail)));
        return;
    }
    bool grow = c->resize.next.size > c->rx.size;
    std::swap(c->grant, c->resize.next);
    c->grant.base = m.sent;
    c->resize.lap_mark = 0; // laps count on the new ring (its windows count from 0)
    c->resize.lap_ns = 0;
    c->rx.mem = c->grant.mem;
    c->rx.size = c->grant.size;
    c->resize.state = Resize::Draining;
    c->resize.seq = 0;
    logf(c->loop->t, TW_LOG_DEBUG,
         "connection %s: receive ring of %llu bytes from stream offset %llu; the old one (%llu bytes) drains",
         c->peer_text.c_str(), static_cast<unsigned long long>(c->rx.size), static_cast<unsigned long long>(m.sent),
         static_cast<unsigned long long>(c->resize.next.size));
    if (grow) c->resize.rx_grows += 1;
    else c->resize.rx_shrinks += 1;
}

void resize_on_tick(tw_conn *c, uint64_t now)
{
    const Settings &s = cfg(c);
    if (c->state != ConnState::Established || c->error || reached(c, kHostClosed) || !pool_of(c)) return;
    if (now - c->resize.last_data_ns < uint64_t(s.ring_idle_ms) * 1000000ull) return;
    // Idle: back to the block's own rings (and no longer busy).
    c->resize.busy = false;
    if (c->resize.state == Resize::None && c->rx.size > s.ring_size && c->version >= kProtoResize && !c->rx.peer_eof &&
        !c->rx.rd_shut && sq_free(c) >= kRingSegments + 2 && window_ops_allowed(c))
        start_resize(c, s.ring_size);
    tx_release_old(c);
    if (c->tx.ring.spare && !c->tx.old.size && !c->tx.sendbuf_out) {
        if (c->tx.done < c->tx.head) {
            post_fence(c); // its completion frees what unsignalled writes left
        } else {
            pool_of(c)->give_ring(c->tx.ring.spare, now);
            c->tx.ring = TxRing{c->res.block->local, s.send_buffer_size, c->res.block->lkey, nullptr, c->tx.head};
            c->tx.mem = c->tx.ring.mem;
            c->tx.size = c->tx.ring.size;
            c->resize.tx_shrinks += 1;
        }
    }
    conn_pump(c);
}

static_assert(offsetof(tw_rdma_rings, window_waits) == TW_RDMA_RINGS_SIZE_V1, "the first size of tw_rdma_rings");

void conn_rings(const tw_conn *c, tw_rdma_rings *out)
{
    uint64_t extra = 0;
    for (const SpareRing *r : {c->grant.spare, c->resize.next.spare, c->tx.ring.spare, c->tx.old.spare})
        if (r) extra += r->size;
    tw_rdma_rings r{};
    r.size = out->size;
    r.rx_ring = c->rx.size;
    r.tx_ring = c->tx.size;
    r.registered = (c->res.block && c->res.ldev && c->res.ldev->pool ? c->res.ldev->pool->block_size() : 0) + extra;
    r.rx_grows = c->resize.rx_grows;
    r.rx_shrinks = c->resize.rx_shrinks;
    r.tx_grows = c->resize.tx_grows;
    r.tx_shrinks = c->resize.tx_shrinks;
    r.window_waits = c->sq.window_waits;
    std::memcpy(out, &r, std::min<size_t>(out->size, sizeof r)); // an older caller's struct is shorter
}

bool resize_teardown(tw_conn *c, bool revoked)
{
    bool next_revoked = grant_revoke(c, c->resize.next);
    Pool *pool = pool_of(c);
    uint64_t now = now_ns(c->loop->t);
    bool block_safe = true;
    auto drop = [&](RingGrant &g, bool safe) {
        if (g.spare && pool) {
            if (safe) pool->give_ring(g.spare, now);
            else pool->retire_ring(g.spare);
        } else if (g.mem && !safe) {
            block_safe = false;
        }
        g.mem = nullptr;
        g.spare = nullptr;
    };
    drop(c->grant, revoked);
    drop(c->resize.next, next_revoked);
    for (TxRing *r : {&c->tx.ring, &c->tx.old}) {
        if (r->spare && pool) pool->give_ring(r->spare, now);
        *r = TxRing{};
    }
    c->resize.state = Resize::None;
    return block_safe;
}

} // namespace twrdma
