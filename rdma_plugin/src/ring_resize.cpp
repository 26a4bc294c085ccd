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

Pool *pool_of(const tw_conn *c) { return c->ldev ? c->ldev->pool.get() : nullptr; }

/// The TX ring left by tx_grow, once every byte in it completed.
void tx_release_old(tw_conn *c)
{
    if (!c->old_tx.size || c->tx_done < c->old_tx_end) return;
    if (c->old_tx.spare) pool_of(c)->give_ring(c->old_tx.spare, now_ns(c->loop->t));
    c->old_tx = TxRing{};
}

/// Take a ring of `size` for the receive side and post the binds of its
/// windows; RESIZE follows their completion.
void start_resize(tw_conn *c, uint64_t size)
{
    if (c->next.leaked) return; // a window that could not be withdrawn keeps its ring
    RingGrant &n = c->next;
    SpareRing *spare = nullptr;
    if (size == cfg(c).ring_size) {
        n.mem = c->block->ring; // back to the block's own ring
        n.mr = c->block->ring_mr;
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
             static_cast<unsigned long long>(c->rx_size), why.c_str());
        if (spare) pool_of(c)->give_ring(spare, now_ns(c->loop->t));
        n.mem = nullptr;
        n.spare = nullptr;
        return;
    }
    ibv_send_wr wrs[kRingSegments];
    for (uint32_t i = 0; i < kRingSegments; ++i) wrs[i] = grant_bind_wr(c, n, i);
    link_chain(wrs, kRingSegments);
    n.binds_posted = kRingSegments;
    c->resize = Resize::Binding;
    if (!post_chain(c, &wrs[0], &wrs[kRingSegments - 1], kRingSegments, true)) return;
    for (uint32_t i = 0; i < kRingSegments; ++i) grant_bind_posted(n, i);
    c->resize_seq = c->wr_posted;
    logf(c->loop->t, TW_LOG_DEBUG, "connection %s: receive ring %llu -> %llu bytes: binding its windows",
         c->peer_text.c_str(), static_cast<unsigned long long>(c->rx_size), static_cast<unsigned long long>(size));
}

/// Draining: withdraw every window of the old ring still bound, then give
/// the ring back once its bytes were read and the invalidations completed.
void drain_old_ring(tw_conn *c)
{
    RingGrant &o = c->next;
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
        c->resize_seq = c->wr_posted;
    }
    if (o.invalidated < o.binds_posted || c->wr_done < c->resize_seq || c->rx_head < c->grant.base) return;
    // The old windows go with their ring: the next ring gets windows that
    // never carried a key of this one.
    if (!grant_revoke(c, o)) {
        c->resize = Resize::None;
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
    c->resize = Resize::None;
}

} // namespace

uint8_t *rx_span(const tw_conn *c, uint64_t pos, uint64_t *len, uint64_t max)
{
    if (c->resize == Resize::Draining && pos < c->grant.base) {
        // The previous ring holds the stream's bytes up to grant.base.
        const RingGrant &o = c->next;
        uint64_t off = (pos - o.base) % o.size;
        *len = std::min({max, o.size - off, c->grant.base - pos});
        return o.mem + off;
    }
    uint64_t off = (pos - c->grant.base) % c->rx_size;
    *len = std::min(max, c->rx_size - off);
    return c->rx + off;
}

uint64_t tx_space(const tw_conn *c) { return c->tx_size - (c->tx_head - std::max(c->tx_done, c->tx_ring.base)); }

uint8_t *tx_span(const tw_conn *c, uint64_t pos, uint32_t *lkey, uint64_t *len, uint64_t max)
{
    const TxRing &r = c->old_tx.size && pos < c->old_tx_end ? c->old_tx : c->tx_ring;
    uint64_t off = (pos - r.base) % r.size;
    uint64_t end = &r == &c->old_tx ? c->old_tx_end - pos : r.size - off;
    *len = std::min({max, r.size - off, end});
    *lkey = r.lkey;
    return r.mem + off;
}

bool tx_grow(tw_conn *c, uint64_t need)
{
    const Settings &s = cfg(c);
    if (!pool_of(c) || c->sendbuf_out) return false;
    tx_release_old(c);
    if (c->old_tx.size) return false; // one switch at a time
    // Bytes waiting for the peer's ring would only wait in a larger one.
    bool in_flight = (c->tx_posted - c->tx_done) * 2 >= c->tx_size;
    if (!in_flight && need <= c->tx_size) return false;
    uint64_t size = c->tx_size * 4;
    while (size < need) size *= 2;
    size = std::min<uint64_t>(size, s.send_buffer_max);
    if (size <= c->tx_size || size < need) return false;
    SpareRing *spare = pool_of(c)->take_ring(size);
    if (!spare) {
        refill_soon(c->loop); // registered from a timer; asked again at the next full ring
        return false;
    }
    c->old_tx = c->tx_ring;
    c->old_tx_end = c->tx_head;
    c->tx_ring = TxRing{spare->mem, size, spare->mr->lkey, spare, c->tx_head};
    c->tx = spare->mem;
    c->tx_size = size;
    c->tx_grows += 1;
    logf(c->loop->t, TW_LOG_DEBUG, "connection %s: TX ring of %llu bytes from stream offset %llu", c->peer_text.c_str(),
         static_cast<unsigned long long>(size), static_cast<unsigned long long>(c->tx_head));
    return true;
}

void resize_pump(tw_conn *c)
{
    tx_release_old(c);
    if (c->version < kProtoResize || !pool_of(c)) return;
    switch (c->resize) {
    case Resize::None:
        // The reader keeps up and the peer still waits: the ring, not the
        // reader, limits the stream.
        if (c->peer_waiting && c->rx_head == c->rx_tail && c->rx_size < cfg(c).ring_max && !c->peer_eof &&
            !c->rd_shut && !c->host_closed && sq_free(c) >= kRingSegments + 2 && window_ops_allowed(c)) {
            c->peer_waiting = false;
            start_resize(c, std::min<uint64_t>(c->rx_size * 4, cfg(c).ring_max));
        }
        break;
    case Resize::Binding:
        if (c->wr_done >= c->resize_seq) {
            c->next.binds_done = c->next.binds_posted;
            c->resize = Resize::Offering; // pump_control sends RESIZE
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
    const char *bad = !c->peer_ring_known  ? "RESIZE before RING"
                      : c->want_resize_ack ? "a second RESIZE before this side's RESIZE_ACK"
                      : (size < kResizeMinRing || size > kResizeMaxRing || (size & (size - 1)))
                          ? "RESIZE to a ring that is not a power of two between 4 KiB and 1 GiB"
                          : nullptr;
    if (bad) {
        conn_fail(c, -TW_EBADFRAME,
                  "malformed message from " + c->peer_text + ": " + bad + "; the connection is closed");
        return;
    }
    ring_keys_from_wire(buf, c->peer_next_rkeys);
    c->peer_next_addr = m.sent;
    c->peer_next_size = size;
    c->want_resize_ack = true;
}

void resize_switch_peer_ring(tw_conn *c)
{
    logf(c->loop->t, TW_LOG_DEBUG, "connection %s: writing the peer's new ring of %llu bytes from stream offset %llu",
         c->peer_text.c_str(), static_cast<unsigned long long>(c->peer_next_size),
         static_cast<unsigned long long>(c->r_written));
    c->peer.ring_addr = c->peer_next_addr;
    c->peer.ring_size = static_cast<uint32_t>(c->peer_next_size);
    std::copy(std::begin(c->peer_next_rkeys), std::end(c->peer_next_rkeys), std::begin(c->peer_rkeys));
    c->r_base = c->r_written;
}

void resize_on_ack(tw_conn *c, const WireCtrl &m)
{
    const char *bad = c->resize != Resize::Offered ? "RESIZE_ACK without a RESIZE" : nullptr;
    if (!bad && m.sent != c->rx_tail) bad = "RESIZE_ACK at another stream offset than the data that arrived";
    if (bad) {
        conn_fail(c, -TW_EBADFRAME,
                  format("malformed message from %s: %s (offset %llu, %llu bytes arrived); the connection is closed",
                         c->peer_text.c_str(), bad, static_cast<unsigned long long>(m.sent),
                         static_cast<unsigned long long>(c->rx_tail)));
        return;
    }
    bool grow = c->next.size > c->rx_size;
    std::swap(c->grant, c->next);
    c->grant.base = m.sent;
    c->rx = c->grant.mem;
    c->rx_size = c->grant.size;
    c->resize = Resize::Draining;
    c->resize_seq = 0;
    logf(c->loop->t, TW_LOG_DEBUG,
         "connection %s: receive ring of %llu bytes from stream offset %llu; the old one (%llu bytes) drains",
         c->peer_text.c_str(), static_cast<unsigned long long>(c->rx_size), static_cast<unsigned long long>(m.sent),
         static_cast<unsigned long long>(c->next.size));
    if (grow) c->rx_grows += 1;
    else c->rx_shrinks += 1;
}

void resize_on_tick(tw_conn *c, uint64_t now)
{
    const Settings &s = cfg(c);
    if (c->state != ConnState::Established || c->error || c->host_closed || !pool_of(c)) return;
    if (now - c->last_data_ns < uint64_t(s.ring_idle_ms) * 1000000ull) return;
    // Idle: back to the block's own rings.
    if (c->resize == Resize::None && c->rx_size > s.ring_size && c->version >= kProtoResize && !c->peer_eof &&
        !c->rd_shut && sq_free(c) >= kRingSegments + 2 && window_ops_allowed(c))
        start_resize(c, s.ring_size);
    tx_release_old(c);
    if (c->tx_ring.spare && !c->old_tx.size && !c->sendbuf_out) {
        if (c->tx_done < c->tx_head) {
            post_fence(c); // its completion frees what unsignalled writes left
        } else {
            pool_of(c)->give_ring(c->tx_ring.spare, now);
            c->tx_ring = TxRing{c->block->local, s.send_buffer_size, c->block->lkey, nullptr, c->tx_head};
            c->tx = c->tx_ring.mem;
            c->tx_size = c->tx_ring.size;
            c->tx_shrinks += 1;
        }
    }
    conn_pump(c);
}

static_assert(offsetof(tw_rdma_rings, window_waits) == TW_RDMA_RINGS_SIZE_V1, "the first size of tw_rdma_rings");

void conn_rings(const tw_conn *c, tw_rdma_rings *out)
{
    uint64_t extra = 0;
    for (const SpareRing *r : {c->grant.spare, c->next.spare, c->tx_ring.spare, c->old_tx.spare})
        if (r) extra += r->size;
    tw_rdma_rings r{};
    r.size = out->size;
    r.rx_ring = c->rx_size;
    r.tx_ring = c->tx_size;
    r.registered = (c->block && c->ldev && c->ldev->pool ? c->ldev->pool->block_size() : 0) + extra;
    r.rx_grows = c->rx_grows;
    r.rx_shrinks = c->rx_shrinks;
    r.tx_grows = c->tx_grows;
    r.tx_shrinks = c->tx_shrinks;
    r.window_waits = c->window_waits;
    std::memcpy(out, &r, std::min<size_t>(out->size, sizeof r)); // an older caller's struct is shorter
}

bool resize_teardown(tw_conn *c, bool revoked)
{
    bool next_revoked = grant_revoke(c, c->next);
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
    drop(c->next, next_revoked);
    for (TxRing *r : {&c->tx_ring, &c->old_tx}) {
        if (r->spare && pool) pool->give_ring(r->spare, now);
        *r = TxRing{};
    }
    c->resize = Resize::None;
    return block_safe;
}

} // namespace twrdma
