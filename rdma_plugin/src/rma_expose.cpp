// SPDX-License-Identifier: MIT
// Exposures: one type-2 memory window per exposure, bound to the
// connection's QP over exactly the exposed range with exactly its access.
// The memory under it is registered here, on the control path (without any
// remote access: the MR's own rkey opens nothing), or comes from
// rma_mem_get, registered when it was lent.  Revocation invalidates the
// window with a LOCAL_INV on the send queue; close and teardown deallocate
// windows at once.
#include "rma.hpp"

#include "report.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace twrdma {

namespace {

void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
    return v;
}
uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
    return v;
}

/// Why registering memory failed, with the fix.
int registration_failed(tw_conn *c, const char *what, int err)
{
    const char *hint = err == ENOMEM || err == EPERM || err == EAGAIN
                           ? "RLIMIT_MEMLOCK is too low for this much registered memory (ulimit -l, or "
                             "LimitMEMLOCK= in the service unit)"
                           : "the memory must be mapped and readable (writable for TW_RMA_WRITE)";
    c->last_error = call_failed(what, err, hint);
    return err == ENOMEM || err == EPERM || err == EAGAIN ? -TW_EMEMLOCK : -ENOMEM;
}

/// Deallocate the window (the key stops working at once) and drop what
/// expose registered.
void drop_window(tw_rma_exposure *e)
{
    if (e->mw) {
        int rc = ibv_dealloc_mw(e->mw);
        if (rc)
            logf(e->conn->loop->t, TW_LOG_WARN, "connection %s: %s", e->conn->peer_text.c_str(),
                 call_failed("ibv_dealloc_mw (exposure)", rc,
                             "the window's key may stay valid until the QP is destroyed")
                     .c_str());
        e->mw = nullptr;
    }
    if (e->own_mr) {
        ibv_dereg_mr(e->own_mr);
        e->own_mr = nullptr;
    }
    e->mr = nullptr;
}

void forget(RmaConn &r, tw_rma_exposure *e)
{
    for (auto it = r.exposures.begin(); it != r.exposures.end(); ++it)
        if (*it == e) {
            r.exposures.erase(it);
            return;
        }
}

/// Take `e` off the binds still to post; false when it was not there.
bool unqueue_bind(RmaConn &r, tw_rma_exposure *e)
{
    for (auto it = r.bind_waiting.begin(); it != r.bind_waiting.end(); ++it)
        if (*it == e) {
            r.bind_waiting.erase(it);
            return true;
        }
    return false;
}

bool connection_usable(const tw_conn *c)
{
    return c->state == ConnState::Established && !c->error && !reached(c, kDisconnected) && c->res.qp &&
           !reached(c, kHostClosed);
}

} // namespace

void rma_desc_write(const RmaDesc &d, void *out)
{
    auto *p = static_cast<uint8_t *>(out);
    std::memset(p, 0, kRmaDescLen);
    put32(p, d.magic);
    p[4] = d.version;
    p[5] = d.access;
    put64(p + 8, d.addr);
    put64(p + 16, d.len);
    put32(p + 24, d.rkey);
}

bool rma_desc_read(const void *in, size_t len, RmaDesc *out)
{
    if (!in || len != kRmaDescLen) return false;
    auto *p = static_cast<const uint8_t *>(in);
    out->magic = get32(p);
    out->version = p[4];
    out->access = p[5];
    out->addr = get64(p + 8);
    out->len = get64(p + 16);
    out->rkey = get32(p + 24);
    return out->magic == kRmaMagic && out->version == kRmaDescVersion;
}

RmaConn &rma_state(tw_conn *c)
{
    if (!c->rma) c->rma = new RmaConn;
    return *c->rma;
}

uint32_t rma_local_lkey(tw_conn *c, const void *p, size_t len, bool writable)
{
    if (!c->rma) return 0;
    auto *b = static_cast<const uint8_t *>(p);
    for (const RmaLent &m : c->rma->lent)
        if (m.mr && b >= m.data && len <= m.len && size_t(b - m.data) <= m.len - len) return m.mr->lkey;
    for (const tw_rma_exposure *e : c->rma->exposures) {
        if (!e->mr || e->revoking) continue;
        if (writable && e->own_mr && !(e->access & TW_RMA_WRITE)) continue; // registered read-only
        if (b >= e->addr && len <= e->len && size_t(b - e->addr) <= e->len - len) return e->mr->lkey;
    }
    return 0;
}

int rma_expose(tw_conn *c, void *addr, size_t len, uint32_t access, tw_rma_exposure **out, void *desc, size_t *desc_len)
{
    if (!addr || len == 0 || !out || !desc || !desc_len || access == 0 ||
        (access & ~uint32_t(TW_RMA_READ | TW_RMA_WRITE)))
        return -EINVAL;
    if (!connection_usable(c)) return -ENOTCONN;
    if (rma_sq_free(c) < 3) {
        c->last_error = "rma_expose: the send queue is full (the window's bind is a work request); retry after "
                        "TW_EV_WRITE or raise rdma.sq_depth";
        return -EAGAIN;
    }
    RmaConn &r = rma_state(c);
    auto *e = new tw_rma_exposure;
    e->conn = c;
    e->addr = static_cast<uint8_t *>(addr);
    e->len = len;
    e->access = access;
    e->id = r.next_exposure_id++;
    for (const RmaLent &m : r.lent)
        if (e->addr >= m.data && len <= m.len && size_t(e->addr - m.data) <= m.len - len) e->mr = m.mr;
    if (!e->mr) {
        // Local write is what a window granting remote write needs; the MR
        // itself grants no remote access.
        int flags = IBV_ACCESS_MW_BIND | ((access & TW_RMA_WRITE) ? IBV_ACCESS_LOCAL_WRITE : 0);
        e->own_mr = ibv_reg_mr(c->res.ldev->dev->pd, addr, len, flags);
        if (!e->own_mr) {
            int rc = registration_failed(c, "ibv_reg_mr (rma_expose)", errno ? errno : ENOMEM);
            delete e;
            return rc;
        }
        e->mr = e->own_mr;
    }
    e->mw = ibv_alloc_mw(c->res.ldev->dev->pd, IBV_MW_TYPE_2);
    if (!e->mw) {
        int err = errno ? errno : ENOMEM;
        c->last_error =
            call_failed("ibv_alloc_mw (rma_expose)", err,
                        "the device is out of memory windows (max_mw): revoke exposures you no longer need");
        drop_window(e);
        delete e;
        return -ENOMEM;
    }
    // A type-2 window takes a new key on each bind; the descriptor names it.
    e->rkey = ibv_inc_rkey(e->mw->rkey);
    r.exposures.push_back(e);
    // The bind goes before anything the application sends afterwards (the
    // descriptor, typically) on this send queue, and, like the ring's
    // windows, behind no remote operation that has not completed: rxe would
    // replay it when it retransmits one (docs/rdma-design.md, "Window
    // operations").  Until it is posted, nothing else is.
    r.bind_waiting.push_back(e);
    rma_post_binds(c);
    if (c->error) { // posting failed: the connection is gone, nothing was exposed
        unqueue_bind(r, e);
        forget(r, e);
        drop_window(e);
        delete e;
        return -ENOTCONN;
    }
    RmaDesc d;
    d.magic = kRmaMagic;
    d.version = kRmaDescVersion;
    d.access = static_cast<uint8_t>(access);
    d.addr = reinterpret_cast<uint64_t>(addr);
    d.len = len;
    d.rkey = e->rkey;
    rma_desc_write(d, desc);
    *desc_len = kRmaDescLen;
    *out = e;
    return 0;
}

int rma_revoke(tw_rma_exposure *e, tw_rma_cb cb, void *arg)
{
    if (!e || e->revoking) return -EINVAL;
    tw_conn *c = e->conn;
    RmaConn &r = rma_state(c);
    e->revoking = true;
    e->revoke_cb = cb;
    e->revoke_arg = arg;
    // The connection is gone, or the bind never went out (nothing on the
    // wire can reach the window): no verb, the memory is free now.
    bool never_bound = unqueue_bind(r, e);
    if (!connection_usable(c) || !e->mw || never_bound) {
        forget(r, e);
        drop_window(e);
        r.completions.push_back(RmaCompletion{cb, arg, 0, e});
        mark_ready(c);
        return 0;
    }
    forget(r, e); // no new local use; the window goes with the LOCAL_INV
    r.invalidate_waiting.push_back(e);
    rma_pump(c);
    return 0;
}

void rma_post_binds(tw_conn *c)
{
    RmaConn &r = *c->rma;
    // With fewer than two entries free no data can go either (it needs three).
    if (r.bind_waiting.empty() || c->error || rma_sq_free(c) < 2) return;
    if (!window_ops_allowed(c)) return;
    ibv_send_wr wrs[16];
    uint32_t n = 0;
    // One entry stays for control; a chain of at most 16.
    while (n < r.bind_waiting.size() && n < 16 && rma_sq_free(c) >= n + 2) {
        tw_rma_exposure *e = r.bind_waiting[n];
        ibv_send_wr &wr = wrs[n++];
        wr = ibv_send_wr{};
        wr.wr_id = make_wr_id(c->serial, WrKind::RmaBind, e->id);
        wr.opcode = IBV_WR_BIND_MW;
        wr.bind_mw.mw = e->mw;
        wr.bind_mw.rkey = e->rkey;
        wr.bind_mw.bind_info.mr = e->mr;
        wr.bind_mw.bind_info.addr = reinterpret_cast<uint64_t>(e->addr);
        wr.bind_mw.bind_info.length = e->len;
        wr.bind_mw.bind_info.mw_access_flags = ((e->access & TW_RMA_READ) ? IBV_ACCESS_REMOTE_READ : 0) |
                                               ((e->access & TW_RMA_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0);
    }
    link_chain(wrs, n);
    if (!post_chain(c, &wrs[0], &wrs[n - 1], n, false)) return;
    for (uint32_t i = 0; i < n; ++i) {
        tw_rma_exposure *e = r.bind_waiting.front();
        r.bind_waiting.pop_front();
        e->mw->rkey = e->rkey; // the provider names the window by its new key from now on
    }
    // More waiting than one chain: the next goes on the next pump, which
    // this window_wait holds data for.
    if (!r.bind_waiting.empty()) c->sq.window_wait = true;
}

void rma_post_invalidations(tw_conn *c)
{
    RmaConn &r = *c->rma;
    if (r.invalidate_waiting.empty() || c->error || rma_sq_free(c) < 2) return;
    if (!window_ops_allowed(c)) return; // after the remote operations before them complete
    while (!r.invalidate_waiting.empty() && rma_sq_free(c) >= 2 && !c->error) {
        tw_rma_exposure *e = r.invalidate_waiting.front();
        ibv_send_wr wr{};
        wr.wr_id = make_wr_id(c->serial, WrKind::RmaInvalidate, e->id);
        wr.opcode = IBV_WR_LOCAL_INV;
        wr.invalidate_rkey = e->rkey;
        r.invalidate_waiting.pop_front();
        r.invalidating.push_back(e);
        if (!post_chain(c, &wr, &wr, 1, true)) return;
    }
}

void rma_on_invalidated(tw_conn *c)
{
    RmaConn &r = rma_state(c);
    if (r.invalidating.empty()) return;
    tw_rma_exposure *e = r.invalidating.front();
    r.invalidating.pop_front();
    forget(r, e);
    drop_window(e);
    r.completions.push_back(RmaCompletion{e->revoke_cb, e->revoke_arg, 0, e});
    mark_ready(c);
}

void rma_drop_windows(tw_conn *c)
{
    if (!c->rma) return;
    for (tw_rma_exposure *e : c->rma->exposures) drop_window(e);
    for (tw_rma_exposure *e : c->rma->invalidating) drop_window(e);
    for (tw_rma_exposure *e : c->rma->invalidate_waiting) drop_window(e);
}

void rma_on_fail(tw_conn *c)
{
    if (!c->rma) return;
    RmaConn &r = *c->rma;
    for (RmaOp &op : r.ops) {
        if (!op.live) continue;
        op.live = false;
        if (!op.cancelled)
            r.completions.push_back(RmaCompletion{op.cb, op.arg, op.status ? op.status : c->error, nullptr});
    }
    r.waiting.clear();
    r.in_flight.clear();
    r.reads_in_flight = 0;
    r.staging_tail = r.staging_head;
    r.bind_waiting.clear(); // their windows go with the exposures
    // Revocations in progress end now: the QP moves no more bytes.
    for (auto *list : {&r.invalidating, &r.invalidate_waiting}) {
        for (tw_rma_exposure *e : *list) {
            forget(r, e);
            drop_window(e);
            r.completions.push_back(RmaCompletion{e->revoke_cb, e->revoke_arg, 0, e});
        }
        list->clear();
    }
    mark_ready(c);
}

bool rma_on_close(tw_conn *c)
{
    if (!c->rma) return false;
    RmaConn &r = *c->rma;
    bool device_holds_app_memory = false;
    for (RmaOp &op : r.ops) {
        if (!op.live) continue;
        if (op.direct && op.posted > op.done) device_holds_app_memory = true;
        op.cancelled = true; // pieces still in flight complete quietly
    }
    r.waiting.clear();
    // Every window goes now, even if the connection lingers to flush.
    rma_drop_windows(c);
    r.bind_waiting.clear();
    for (tw_rma_exposure *e : r.exposures) delete e;
    r.exposures.clear();
    for (auto *list : {&r.invalidating, &r.invalidate_waiting}) {
        for (tw_rma_exposure *e : *list) delete e;
        list->clear();
    }
    for (RmaCompletion &k : r.completions) delete k.exposure;
    r.completions.clear();
    return device_holds_app_memory;
}

void rma_release(tw_conn *c)
{
    if (!c->rma) return;
    rma_on_close(c);
    RmaConn &r = *c->rma;
    for (RmaLent &m : r.lent) {
        if (m.mr) ibv_dereg_mr(m.mr);
        std::free(m.data);
    }
    if (r.staging_mr) ibv_dereg_mr(r.staging_mr);
    std::free(r.staging);
    delete c->rma;
    c->rma = nullptr;
}

void rma_forget_device(tw_conn *c)
{
    if (!c->rma) return;
    RmaConn &r = *c->rma;
    rma_drop_windows(c);
    // Lent memory stays the application's until rma_mem_put; only its
    // registration goes with the device.
    for (RmaLent &m : r.lent) {
        if (m.mr) ibv_dereg_mr(m.mr);
        m.mr = nullptr;
    }
    if (r.staging_mr) ibv_dereg_mr(r.staging_mr);
    r.staging_mr = nullptr;
}

bool rma_has_completions(const tw_conn *c) { return c->rma && !c->rma->completions.empty(); }

bool rma_in_flight(const tw_conn *c) { return c->rma && !c->rma->in_flight.empty(); }

void rma_run_completions(tw_conn *c)
{
    std::vector<RmaCompletion> batch;
    batch.swap(c->rma->completions);
    c->rma->delivering = true;
    for (RmaCompletion &k : batch) {
        // close() in an earlier callback: no callback runs after it.
        if (!reached(c, kHostClosed) && k.cb) k.cb(k.arg, k.status);
        delete k.exposure;
    }
    // c->rma lives as long as c (freed in conn_delete, never from a callback).
    c->rma->delivering = false;
    if (!reached(c, kHostClosed)) rma_pump(c);
}

int rma_mem_get(tw_conn *c, size_t len, tw_buf *out)
{
    if (len == 0 || !out) return -EINVAL;
    if (!c->res.ldev || c->state == ConnState::Finished) return -ENOTCONN;
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t rounded = (len + page - 1) / page * page;
    void *p = nullptr;
    if (posix_memalign(&p, page, rounded) != 0) return -ENOMEM;
    // Registered now, once: exposing it or using it as `local` needs none.
    ibv_mr *mr = ibv_reg_mr(c->res.ldev->dev->pd, p, rounded, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
    if (!mr) {
        int rc = registration_failed(c, "ibv_reg_mr (rma_mem_get)", errno ? errno : ENOMEM);
        std::free(p);
        return rc;
    }
    rma_state(c).lent.push_back(RmaLent{static_cast<uint8_t *>(p), rounded, mr});
    out->data = p;
    out->len = len;
    out->cap = rounded;
    out->token = reinterpret_cast<uint64_t>(p);
    return 0;
}

int rma_mem_put(tw_conn *c, tw_buf *buf)
{
    if (!buf || !c->rma) return -EINVAL;
    RmaConn &r = *c->rma;
    for (auto it = r.lent.begin(); it != r.lent.end(); ++it) {
        if (reinterpret_cast<uint64_t>(it->data) != buf->token) continue;
        for (const tw_rma_exposure *e : r.exposures)
            if (it->mr && e->mr == it->mr) return -EBUSY;
        for (const RmaOp &op : r.ops)
            if (op.live && op.local >= it->data && op.local < it->data + it->len) return -EBUSY;
        if (it->mr) ibv_dereg_mr(it->mr);
        std::free(it->data);
        r.lent.erase(it);
        return 0;
    }
    return -EINVAL;
}

} // namespace twrdma
