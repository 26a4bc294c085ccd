// SPDX-License-Identifier: MIT
// The ABI boundary: the functions of the vtable (the table and the entry
// point are in ops_table.c), and the guards every call passes (fork check,
// no exception crosses into C).
#include "ops.h"
#include "process_guard.hpp"
#include "report.hpp"
#include "rma.hpp"
#include "transport.hpp"

#include <cerrno>
#include <cstring>
#include <new>

using namespace twrdma;

namespace {

/// Run `fn`, turning any exception into an error code: none crosses into C.
template <class Fn> auto no_throw(Fn fn) -> decltype(fn())
{
    using R = decltype(fn());
    try {
        return fn();
    } catch (const std::bad_alloc &) {
        return static_cast<R>(-ENOMEM);
    } catch (...) {
        return static_cast<R>(-EIO);
    }
}

/// no_throw, and a forked child gets -TW_EFORKED.  The data path checks only
/// the atfork flag: getpid() is a syscall, and the loop calls
/// has_pending/process_pending every turn.
template <class Fn> auto guarded(Fn fn) -> decltype(fn())
{
    using R = decltype(fn());
    if (forked_flag()) return static_cast<R>(-TW_EFORKED);
    return no_throw(fn);
}

/// For the calls that create or destroy objects: the full check, pid included.
template <class Fn> auto guarded_setup(Fn fn) -> decltype(fn())
{
    using R = decltype(fn());
    if (in_forked_child()) return static_cast<R>(-TW_EFORKED);
    return guarded(fn);
}

template <class Fn> void guarded_void(Fn fn)
{
    // In a forked child the objects belong to the parent: touch nothing.
    if (in_forked_child()) return;
    try {
        fn();
    } catch (...) {
    }
}

int addr_out(sockaddr *sa, sockaddr *addr, uint32_t *addrlen)
{
    if (!sa || sa->sa_family == 0) return -ENOTCONN;
    uint32_t need = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    std::memcpy(addr, sa, std::min(need, *addrlen));
    *addrlen = need;
    return 0;
}

// The caller's tw_buf holds every ABI 1.0 member (it may hold more: ignored).
bool buf_fits_v1(const tw_buf *b) { return b && b->size >= TW_BUF_SIZE_V1; }

} // namespace

int op_init(const tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    return no_throw([&] { return transport_init(host, out, why, why_len); });
}

// Needs neither a device nor rdma-core: works on every host, in every mode.
int op_check_config(const tw_host *host, char *why, size_t why_len)
{
    return no_throw([&] { return transport_check_config(host, why, why_len); });
}

void op_fini(tw_transport *t)
{
    guarded_void([&] { transport_fini(t); });
}

int op_probe(const tw_host *host, char *buf, size_t len)
{
    try {
        return transport_probe(host, buf, len);
    } catch (...) {
        return -ENOMEM;
    }
}

int op_describe(tw_transport *t, char *buf, size_t len)
{
    return guarded_setup([&] { return transport_describe(t, buf, len); });
}

int op_loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out)
{
    return guarded_setup([&] { return loop_attach(t, loop, out); });
}

void op_loop_detach(tw_transport_loop *l)
{
    guarded_void([&] { loop_detach(l); });
}

int op_has_pending(tw_transport_loop *l)
{
    if (forked_flag()) return 0;
    return guarded([&] { return has_pending(l); });
}

int op_process_pending(tw_transport_loop *l)
{
    return guarded([&] { return process_pending(l); });
}

int op_listen(tw_transport_loop *l, const tw_listen_params *p, tw_listener **out)
{
    return guarded_setup([&] { return listener_open(l, p, out); });
}

int op_accept(tw_listener *ls, tw_transport_loop *target, tw_conn **out)
{
    return guarded_setup([&] { return listener_accept(ls, target, out); });
}

int op_listener_addr(tw_listener *ls, sockaddr *addr, uint32_t *addrlen)
{
    return guarded([&]() -> int {
        // Where it listens (and listens again, when its device went).
        const sockaddr *sa = reinterpret_cast<const sockaddr *>(&ls->addr);
        uint32_t need = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
        std::memcpy(addr, sa, std::min(need, *addrlen));
        *addrlen = need;
        return 0;
    });
}

void op_listener_close(tw_listener *ls)
{
    guarded_void([&] { listener_close(ls); });
}

int op_connect(tw_transport_loop *l, const tw_connect_params *p, tw_conn **out)
{
    return guarded_setup([&] { return conn_connect(l, p, out); });
}

int op_set_callback(tw_conn *c, tw_conn_cb cb, void *arg)
{
    return guarded([&] {
        c->host.cb = cb;
        c->host.cb_arg = arg;
        mark_ready(c);
        return 0;
    });
}

int op_set_events(tw_conn *c, uint32_t events)
{
    return guarded([&] {
        c->host.interest = events & (TW_EV_READ | TW_EV_WRITE);
        mark_ready(c);
        return 0;
    });
}

ssize_t op_read(tw_conn *c, void *buf, size_t len)
{
    return guarded([&] {
        iovec v{buf, len};
        return conn_read(c, &v, 1);
    });
}

ssize_t op_readv(tw_conn *c, const iovec *iov, int iovcnt)
{
    return guarded([&]() -> ssize_t {
        if (iovcnt < 0) return -EINVAL;
        return conn_read(c, iov, iovcnt);
    });
}

ssize_t op_write(tw_conn *c, const void *buf, size_t len)
{
    return guarded([&] {
        iovec v{const_cast<void *>(buf), len};
        return conn_write(c, &v, 1);
    });
}

ssize_t op_writev(tw_conn *c, const iovec *iov, int iovcnt)
{
    return guarded([&]() -> ssize_t {
        if (iovcnt < 0) return -EINVAL;
        return conn_write(c, iov, iovcnt);
    });
}

int op_shutdown(tw_conn *c, int how)
{
    return guarded([&] { return conn_shutdown(c, how); });
}

void op_close(tw_conn *c)
{
    guarded_void([&] { conn_close(c); });
}

int op_get_error(tw_conn *c)
{
    if (forked_flag()) return -TW_EFORKED;
    return c->error;
}

const char *op_last_error(tw_conn *c)
{
    if (forked_flag()) return fork_message();
    return c->last_error.c_str();
}

int op_local_addr(tw_conn *c, sockaddr *addr, uint32_t *addrlen)
{
    return guarded([&] { return c->res.id ? addr_out(rdma_get_local_addr(c->res.id), addr, addrlen) : -ENOTCONN; });
}

int op_peer_addr(tw_conn *c, sockaddr *addr, uint32_t *addrlen)
{
    return guarded([&] { return c->res.id ? addr_out(rdma_get_peer_addr(c->res.id), addr, addrlen) : -ENOTCONN; });
}

int op_get_stats(tw_conn *c, tw_conn_stats *out)
{
    return guarded([&]() -> int {
        if (!out || out->size < 8) return -EINVAL;
        tw_conn_stats s = c->stats;
        s.size = out->size;
        s.version = TW_CONN_STATS_VERSION;
        std::memcpy(out, &s, std::min<size_t>(out->size, sizeof s));
        return 0;
    });
}

const char *op_strerror(int err)
{
    int e = err < 0 ? -err : err;
    if (e == TW_EFORKED) return fork_message();
    if (e > TW_EBASE && e < TW_ELAST) return tw_strerror(e);
    return nullptr;
}

int op_send_buf_get(tw_conn *c, size_t min_len, tw_buf *out)
{
    if (!buf_fits_v1(out)) return -EINVAL;
    return guarded([&] { return conn_send_buf_get(c, min_len, out); });
}

int op_send_buf_submit(tw_conn *c, tw_buf *buf)
{
    if (!buf_fits_v1(buf)) return -EINVAL;
    return guarded([&] { return conn_send_buf_submit(c, buf); });
}

int op_recv_buf_borrow(tw_conn *c, tw_buf *out)
{
    if (!buf_fits_v1(out)) return -EINVAL;
    return guarded([&] { return conn_recv_buf_borrow(c, out); });
}

int op_recv_buf_return(tw_conn *c, tw_buf *buf, size_t consumed)
{
    if (!buf_fits_v1(buf)) return -EINVAL;
    return guarded([&] { return conn_recv_buf_return(c, buf, consumed); });
}

// One-sided memory: creating and withdrawing exposures gets the full fork
// check (lesson 1: an exposure in a forked child is -TW_EFORKED).
int op_rma_expose(tw_conn *c, void *addr, size_t len, uint32_t access, tw_rma_exposure **out, void *desc,
                  size_t *desc_len)
{
    return guarded_setup([&] { return rma_expose(c, addr, len, access, out, desc, desc_len); });
}

int op_rma_revoke(tw_rma_exposure *e, tw_rma_cb cb, void *arg)
{
    return guarded_setup([&] { return rma_revoke(e, cb, arg); });
}

int op_rma_post(tw_conn *c, const tw_rma_request *req)
{
    return guarded([&] { return rma_post(c, req); });
}

int op_rma_mem_get(tw_conn *c, size_t len, tw_buf *out)
{
    if (!buf_fits_v1(out)) return -EINVAL;
    return guarded_setup([&] { return rma_mem_get(c, len, out); });
}

int op_rma_mem_put(tw_conn *c, tw_buf *buf)
{
    if (!buf_fits_v1(buf)) return -EINVAL;
    return guarded_setup([&] { return rma_mem_put(c, buf); });
}

int op_ctrl(tw_transport *t, tw_conn *c, const char *ns, uint32_t op, void *data, size_t len)
{
    if (ns && std::strcmp(ns, TW_RDMA_CTRL_NS) == 0) {
        return guarded([&]() -> int {
            if (op != TW_RDMA_CTRL_GET_RINGS) return -EOPNOTSUPP;
            auto *r = static_cast<tw_rdma_rings *>(data);
            if (!c || !r || len < TW_RDMA_RINGS_SIZE_V1 || r->size < TW_RDMA_RINGS_SIZE_V1 || r->size > len)
                return -EINVAL;
            conn_rings(c, r);
            return 0;
        });
    }
    if (ns) return -EOPNOTSUPP; // another transport's namespace
    return guarded([&]() -> int {
        switch (op) {
        case TW_CTRL_GET_FD:
            return -ENOTSUP;
        case TW_CTRL_SET_NODELAY:
            return 0; // every write is posted at once already
        case TW_CTRL_GET_TRANSPORT_STATS: {
            auto *st = static_cast<tw_transport_stats *>(data);
            tw_transport *tr = c ? c->loop->t : t;
            if (!st || !tr || len < 8 || st->size < 8 || st->size > len) return -EINVAL;
            tr->counters.fill(st);
            return 0;
        }
        default:
            return -EOPNOTSUPP;
        }
    });
}
