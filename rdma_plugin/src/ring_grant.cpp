// SPDX-License-Identifier: MIT
// The one remote right a connection hands its peer: RDMA WRITE into the
// free part of its own receive ring.  The ring is kRingSegments segments,
// each behind a type-2 memory window bound to the connection's QP (no
// other QP can use its key): bound while the segment is free, invalidated
// as soon as the peer filled it, bound again (new key) once the
// application consumed it.  So the peer's keys never open bytes that
// arrived and wait to be read, except in the segment it is still filling.
// All windows are deallocated when the connection fails or ends.  The
// pool's slabs are registered without remote access, so nothing else of
// ours is writable from the wire.  Windows are allocated at setup; binds
// and invalidations are work requests on the send queue, never a
// registration.
#include "core.hpp"

#include "report.hpp"

#include <cerrno>

namespace twrdma {

int grant_prepare(tw_conn *c, RingGrant &g, std::string *why)
{
    Device *dev = c->res.ldev->dev;
    if (!device_has_type2_mw(*dev)) {
        *why = format("RDMA device %s has no type 2 memory windows, which twinwire needs to limit what a peer can "
                      "write to its own receive ring; use a device that supports them (rxe, mlx5, ...)",
                      dev->name.c_str());
        return -EOPNOTSUPP;
    }
    for (uint32_t i = 0; i < kRingSegments; ++i) {
        ibv_mw *mw = g.mw[i];
        if (!mw) {
            mw = ibv_alloc_mw(dev->pd, IBV_MW_TYPE_2);
            if (!mw) {
                int err = errno ? errno : ENOMEM;
                *why = call_failed("ibv_alloc_mw (receive ring window)", err,
                                   "the device is out of memory windows (max_mw); fewer connections or another device");
                return -err;
            }
            g.mw[i] = mw;
        }
        // A type-2 window takes a new key on every bind: an rkey from
        // another binding (another lap, another ring) never matches.
        g.lap0_rkey[i] = ibv_inc_rkey(mw->rkey);
    }
    g.seg = g.size / kRingSegments;
    g.binds_posted = g.binds_done = g.invalidated = 0;
    g.gen = c->resize.grant_gens++;
    return 0;
}

ibv_send_wr grant_bind_wr(tw_conn *c, RingGrant &g, uint64_t seg)
{
    ibv_mw *mw = g.mw[seg % kRingSegments];
    uint32_t key = segment_rkey(g.lap0_rkey[seg % kRingSegments], seg / kRingSegments);
    ibv_send_wr wr{};
    wr.wr_id = make_wr_id(c->serial, WrKind::Bind, static_cast<uint32_t>(seg % kRingSegments));
    wr.opcode = IBV_WR_BIND_MW;
    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = key;
    wr.bind_mw.bind_info.mr = g.mr;
    wr.bind_mw.bind_info.addr = reinterpret_cast<uint64_t>(g.mem + (seg % kRingSegments) * g.seg);
    wr.bind_mw.bind_info.length = g.seg;
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
    return wr;
}

void grant_bind_posted(RingGrant &g, uint64_t seg)
{
    // The provider names the window by its key at post time (the old one);
    // the next invalidation and bind name it by the new one.
    g.mw[seg % kRingSegments]->rkey = segment_rkey(g.lap0_rkey[seg % kRingSegments], seg / kRingSegments);
}

ibv_send_wr grant_invalidate_wr(tw_conn *c, RingGrant &g, uint64_t seg)
{
    ibv_send_wr wr{};
    wr.wr_id = make_wr_id(c->serial, WrKind::Invalidate, static_cast<uint32_t>(seg % kRingSegments));
    wr.opcode = IBV_WR_LOCAL_INV;
    wr.invalidate_rkey = g.mw[seg % kRingSegments]->rkey;
    return wr;
}

bool grant_revoke(tw_conn *c, RingGrant &g)
{
    if (g.leaked) return false;
    int failed = 0;
    for (ibv_mw *&mw : g.mw) {
        if (!mw) continue;
        int rc = ibv_dealloc_mw(mw);
        mw = nullptr;
        if (rc) failed = rc;
    }
    if (failed) {
        g.leaked = true;
        logf(c->loop->t, TW_LOG_WARN, "connection %s: %s", c->peer_text.c_str(),
             call_failed("ibv_dealloc_mw (receive ring window)", failed,
                         "the peer's rkey may stay valid; the ring is retired, never reused")
                 .c_str());
        return false;
    }
    return true;
}

} // namespace twrdma
