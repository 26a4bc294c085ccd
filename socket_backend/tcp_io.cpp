// SPDX-License-Identifier: MIT
// Moving bytes: read/readv/write/writev like their syscalls (short writes,
// -EAGAIN), send/sendmsg with MSG_NOSIGNAL so a closed peer never raises SIGPIPE.
#include "tcp_internal.hpp"

#include <limits.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace twinwire::tcp {
namespace {

/// 0 when the connection can move bytes, else what the operation returns.
int io_gate(const tw_conn *c)
{
    switch (c->state) {
    case ConnState::Open:
        return 0;
    case ConnState::Connecting:
    case ConnState::Announcing:
        return -EAGAIN;
    case ConnState::Failed:
    case ConnState::Lingering:
        break;
    }
    return c->error ? c->error : -ENOTCONN;
}

int check_iov(const struct iovec *iov, int iovcnt, size_t *total)
{
    if (iovcnt < 0 || (iovcnt > 0 && !iov)) return -EINVAL;
    *total = 0;
    for (int i = 0; i < iovcnt; i++) *total += iov[i].iov_len;
    return 0;
}

/// Serve a read from the bytes a partial recv_buf_return left behind.
size_t read_buffered(tw_conn *c, const struct iovec *iov, int iovcnt)
{
    size_t done = 0;
    for (int i = 0; i < iovcnt && c->in.left(); i++) {
        size_t n = std::min(iov[i].iov_len, c->in.left());
        memcpy(iov[i].iov_base, c->in.data + c->in.off, n);
        c->in.off += n;
        done += n;
    }
    return done;
}

} // namespace

ssize_t conn_readv(tw_conn *c, const struct iovec *iov, int iovcnt)
{
    size_t total;
    if (int rc = check_iov(iov, iovcnt, &total); rc < 0) return rc;
    if (int rc = io_gate(c); rc < 0) return rc;
    if (c->in.lent) return -EBUSY;
    if (total == 0) return 0;
    if (c->in.left()) return static_cast<ssize_t>(read_buffered(c, iov, iovcnt));
    for (;;) {
        // recv for one buffer: the kernel skips readv's iovec import (the
        // common case of a small message read into one reserved chunk).
        ssize_t n = iovcnt == 1 ? ::recv(c->fd, iov[0].iov_base, iov[0].iov_len, 0)
                                : ::readv(c->fd, iov, std::min(iovcnt, IOV_MAX));
        if (n > 0) {
            c->stats.bytes_received += n;
            c->stats.messages_received++;
            return n;
        }
        // After a failure the stream ends with the error, not a clean EOF.
        if (n == 0) return c->error;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return c->error ? c->error : -EAGAIN;
        int err = -errno;
        conn_fail(c, err, "recv");
        return err;
    }
}

ssize_t conn_read(tw_conn *c, void *buf, size_t len)
{
    struct iovec v = {buf, len};
    return conn_readv(c, &v, 1);
}

ssize_t conn_send_iov(tw_conn *c, const struct iovec *iov, int iovcnt, const char *call)
{
    struct msghdr m = {};
    m.msg_iov = const_cast<struct iovec *>(iov);
    m.msg_iovlen = static_cast<size_t>(std::min(iovcnt, IOV_MAX));
    for (;;) {
        // send for one buffer: no msghdr and iovec to copy in (most replies).
        ssize_t n = iovcnt == 1 ? ::send(c->fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL)
                                : ::sendmsg(c->fd, &m, MSG_NOSIGNAL);
        if (n >= 0) {
            c->stats.bytes_sent += n;
            c->stats.messages_sent++;
            return n;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return -EAGAIN;
        int err = -errno;
        conn_fail(c, err, call);
        return err;
    }
}

bool conn_flush_out(tw_conn *c)
{
    while (c->out.unsent() && !c->error) {
        struct iovec v = {c->out.data + c->out.off, c->out.unsent()};
        ssize_t n = conn_send_iov(c, &v, 1, "send");
        if (n < 0) break;
        c->out.off += n;
    }
    bool drained = !c->out.unsent() && !c->error;
    if (drained) {
        c->out.off = c->out.len = 0;
        if (c->shut_wr_pending) {
            c->shut_wr_pending = false;
            ::shutdown(c->fd, SHUT_WR);
        }
    }
    conn_update_watch(c);
    return drained;
}

ssize_t conn_writev(tw_conn *c, const struct iovec *iov, int iovcnt)
{
    size_t total;
    if (int rc = check_iov(iov, iovcnt, &total); rc < 0) return rc;
    if (int rc = io_gate(c); rc < 0) return rc;
    if (c->error) return c->error;
    if (c->wr_shut) return -EPIPE;
    if (total == 0) return 0;
    // Bytes submitted through the zero-copy API go first.
    if (c->out.unsent() && !conn_flush_out(c)) {
        if (c->error) return c->error;
        c->stats.write_would_block++;
        return -EAGAIN;
    }
    ssize_t n = conn_send_iov(c, iov, iovcnt, "send");
    if (n == -EAGAIN || (n >= 0 && static_cast<size_t>(n) < total)) c->stats.write_would_block++;
    return n;
}

ssize_t conn_write(tw_conn *c, const void *buf, size_t len)
{
    struct iovec v = {const_cast<void *>(buf), len};
    return conn_writev(c, &v, 1);
}

int conn_shutdown(tw_conn *c, int how)
{
    if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR) return -EINVAL;
    switch (c->state) {
    case ConnState::Open:
        break;
    case ConnState::Connecting:
    case ConnState::Announcing:
        return -ENOTCONN;
    case ConnState::Failed:
    case ConnState::Lingering:
        return c->error ? c->error : -ENOTCONN;
    }
    if (how != SHUT_RD) {
        c->wr_shut = true;
        // The FIN must follow the submitted bytes still queued here.
        if (c->out.unsent()) {
            c->shut_wr_pending = true;
            if (how == SHUT_WR) return 0;
            how = SHUT_RD;
        }
    }
    return ::shutdown(c->fd, how) < 0 ? -errno : 0;
}

} // namespace twinwire::tcp
