// SPDX-License-Identifier: MIT
// The one remote right a connection hands its peer: RDMA WRITE into its own
// receive ring, through a type-2 memory window bound to the connection's QP
// (no other QP can use the rkey), deallocated when the connection fails or
// ends.  The pool's slabs are registered without remote access, so nothing
// else of ours is writable from the wire.  Setup path only: one MW alloc
// and one bind WR per connection, never on the data path.
#include "core.hpp"

#include "report.hpp"

#include <cerrno>

namespace twrdma {

int grant_prepare(tw_conn *c, std::string *why)
{
    Device *dev = c->ldev->dev;
    if (!device_has_type2_mw(*dev)) {
        *why = format("RDMA device %s has no type 2 memory windows, which twinwire needs to limit what a peer can "
                      "write to its own receive ring; use a device that supports them (rxe, mlx5, ...)",
                      dev->name.c_str());
        return -EOPNOTSUPP;
    }
    c->grant.mw = ibv_alloc_mw(dev->pd, IBV_MW_TYPE_2);
    if (!c->grant.mw) {
        int err = errno ? errno : ENOMEM;
        *why = call_failed("ibv_alloc_mw (receive ring window)", err,
                           "the device is out of memory windows (max_mw); fewer connections or another device");
        return -err;
    }
    return 0;
}

ibv_send_wr grant_bind_wr(tw_conn *c)
{
    ibv_send_wr wr{};
    wr.wr_id = make_wr_id(c->serial, WrKind::Bind, 0);
    wr.opcode = IBV_WR_BIND_MW;
    wr.bind_mw.mw = c->grant.mw;
    // A type-2 window takes a new key on every bind: an rkey from another
    // binding never matches.
    wr.bind_mw.rkey = ibv_inc_rkey(c->grant.mw->rkey);
    wr.bind_mw.bind_info.mr = c->block->ring_mr;
    wr.bind_mw.bind_info.addr = reinterpret_cast<uint64_t>(c->rx);
    wr.bind_mw.bind_info.length = c->rx_size;
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
    c->grant.rkey = wr.bind_mw.rkey;
    return wr;
}

bool grant_revoke(tw_conn *c)
{
    if (c->grant.leaked) return false;
    if (!c->grant.mw) return true;
    int rc = ibv_dealloc_mw(c->grant.mw);
    c->grant.mw = nullptr;
    c->grant.bound = false;
    if (rc) {
        c->grant.leaked = true;
        logf(c->loop->t, TW_LOG_WARN, "connection %s: %s", c->peer_text.c_str(),
             call_failed("ibv_dealloc_mw (receive ring window)", rc,
                         "the peer's rkey may stay valid; the ring is retired, never reused")
                 .c_str());
        return false;
    }
    return true;
}

} // namespace twrdma
