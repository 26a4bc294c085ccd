// SPDX-License-Identifier: MIT
// The zero-copy buffer API over plain sockets, with one copy: send_buf_get
// lends a malloc'd buffer that submit drains into the socket (from the loop
// when the socket is full); recv_buf_borrow receives into an owned buffer
// and lends it, and what the host does not consume is read again.
#include "tcp_internal.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace twinwire::tcp {
namespace {

int ready_to_send(const tw_conn *c)
{
    switch (c->state) {
    case ConnState::Open:
        break;
    case ConnState::Connecting:
    case ConnState::Announcing:
        return -EAGAIN;
    case ConnState::Failed:
    case ConnState::Lingering:
        return c->error ? c->error : -ENOTCONN;
    }
    if (c->error) return c->error;
    return c->wr_shut ? -EPIPE : 0;
}

uint64_t token_of(const void *p) { return reinterpret_cast<uintptr_t>(p); }

/// A buffer of at least `want` bytes; a huge one from an earlier large
/// request is given back rather than kept for the connection's lifetime.
bool size_out_buffer(tw_conn *c, size_t want)
{
    bool too_small = c->out.cap < want;
    bool too_large = c->out.cap > (size_t(1) << 20) && c->out.cap > 4 * want;
    if (!too_small && !too_large) return true;
    char *p = static_cast<char *>(malloc(want));
    if (!p) return false;
    free(c->out.data);
    c->out.data = p;
    c->out.cap = want;
    return true;
}

// The caller's tw_buf holds every ABI 1.0 member (it may hold more: ignored).
bool buf_fits_v1(const tw_buf *b) { return b && b->size >= TW_BUF_SIZE_V1; }

} // namespace

int conn_send_buf_get(tw_conn *c, size_t min_len, tw_buf *out)
{
    if (!buf_fits_v1(out)) return -EINVAL;
    if (min_len > kSendBufMax) return -EMSGSIZE;
    if (int rc = ready_to_send(c); rc < 0) return rc;
    if (c->out.lent) return -EBUSY;
    // The one buffer is still draining into the socket.
    if (c->out.unsent() && !conn_flush_out(c)) return c->error ? c->error : -EAGAIN;
    if (!size_out_buffer(c, std::max(min_len, kSendBufDefault))) return -ENOMEM;
    c->out.lent = true;
    out->data = c->out.data;
    out->cap = c->out.cap;
    out->len = 0;
    out->token = token_of(c->out.data);
    return 0;
}

int conn_send_buf_submit(tw_conn *c, tw_buf *buf)
{
    if (!buf_fits_v1(buf) || !c->out.lent || buf->data != c->out.data || buf->token != token_of(c->out.data))
        return -EINVAL;
    if (buf->len > c->out.cap) return -EINVAL;
    c->out.lent = false;
    c->stats.zero_copy_sends++;
    if (int rc = ready_to_send(c); rc < 0) return rc;
    c->out.len = buf->len;
    c->out.off = 0;
    if (!conn_flush_out(c)) {
        if (c->error) return c->error;
        c->stats.write_would_block++;
    }
    return 0;
}

int conn_recv_buf_borrow(tw_conn *c, tw_buf *out)
{
    if (!buf_fits_v1(out)) return -EINVAL;
    switch (c->state) {
    case ConnState::Open:
        break;
    case ConnState::Connecting:
    case ConnState::Announcing:
        return -EAGAIN;
    case ConnState::Failed:
    case ConnState::Lingering:
        return c->error ? c->error : -ENOTCONN;
    }
    if (c->in.lent) return -EBUSY;
    if (!c->in.left()) {
        if (!c->in.data && !(c->in.data = static_cast<char *>(malloc(kRecvBufSize)))) return -ENOMEM;
        c->in.off = c->in.len = 0;
        for (;;) {
            ssize_t n = ::recv(c->fd, c->in.data, kRecvBufSize, 0);
            if (n > 0) {
                c->stats.bytes_received += n;
                c->stats.messages_received++;
                c->in.len = static_cast<size_t>(n);
                break;
            }
            if (n == 0) {
                if (c->error) return c->error;
                out->data = nullptr;
                out->len = out->cap = 0;
                out->token = 0;
                return 0;
            }
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return c->error ? c->error : -EAGAIN;
            int err = -errno;
            conn_fail(c, err, "recv");
            return err;
        }
    }
    c->in.lent = true;
    c->stats.zero_copy_recvs++;
    out->data = c->in.data + c->in.off;
    out->len = out->cap = c->in.left();
    out->token = token_of(out->data);
    return 0;
}

int conn_recv_buf_return(tw_conn *c, tw_buf *buf, size_t consumed)
{
    if (!buf_fits_v1(buf) || !c->in.lent || buf->data != c->in.data + c->in.off || buf->token != token_of(buf->data))
        return -EINVAL;
    if (consumed > c->in.left()) return -EINVAL;
    c->in.off += consumed;
    c->in.lent = false;
    // What is left stays readable though no fd says so: the kick reports it.
    if (c->in.left() && (c->interest & TW_EV_READ)) conn_kick(c);
    return 0;
}

} // namespace twinwire::tcp
