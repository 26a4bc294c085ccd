// SPDX-License-Identifier: MIT
// The byte stream: write copies into the peer's receive ring, read copies
// out of one's own; send_buf_get lends the peer's ring itself and
// recv_buf_borrow one's own, so the zero-copy calls copy nothing.
#include "pair.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace twpair {

void Ring::rewind_if_idle()
{
    if (used() == 0 && !send_lent && !recv_lent) head = tail = 0;
}

namespace {

/// -EAGAIN before TW_EV_CONNECTED (rule 3), the error once failed.
int not_up(const tw_conn *c) { return c->error ? c->error : -EAGAIN; }

/// Why a write cannot start now (0: it can).  Link mutex held.
int write_refusal(tw_conn *c)
{
    conn_sync(c);
    if (c->error) return c->error;
    if (c->wr_shut) {
        c->last_error = "write: after shutdown(SHUT_WR) on this connection";
        return -EPIPE;
    }
    if (c->send_lent) return -EBUSY;
    if (!c->link->end[c->peer_side()])
        return conn_fail(c, -EPIPE, "write", "the peer closed its end; read what it sent, then close");
    return 0;
}

bool ensure_storage(Ring &r)
{
    if (!r.data) r.data.reset(new (std::nothrow) char[r.cap]);
    return r.data != nullptr;
}

size_t total_length(const iovec *iov, int iovcnt)
{
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++) total += iov[i].iov_len;
    return total;
}

/// Copy up to `room` bytes of iov into the ring at tail.
size_t copy_in(Ring &r, const iovec *iov, int iovcnt, size_t room)
{
    size_t done = 0;
    for (int i = 0; i < iovcnt && done < room; i++) {
        const char *src = static_cast<const char *>(iov[i].iov_base);
        size_t want = std::min(iov[i].iov_len, room - done);
        for (size_t moved = 0; moved < want;) {
            size_t off = static_cast<size_t>(r.tail % r.cap);
            size_t chunk = std::min(want - moved, r.cap - off);
            memcpy(r.data.get() + off, src + moved, chunk);
            moved += chunk;
            r.tail += chunk;
        }
        done += want;
    }
    return done;
}

/// Copy up to the iov's room out of the ring at head.
size_t copy_out(Ring &r, const iovec *iov, int iovcnt)
{
    size_t done = 0;
    for (int i = 0; i < iovcnt && r.used() > 0; i++) {
        char *dst = static_cast<char *>(iov[i].iov_base);
        size_t want = std::min(iov[i].iov_len, r.used());
        for (size_t moved = 0; moved < want;) {
            size_t off = static_cast<size_t>(r.head % r.cap);
            size_t chunk = std::min(want - moved, r.cap - off);
            memcpy(dst + moved, r.data.get() + off, chunk);
            moved += chunk;
            r.head += chunk;
        }
        done += want;
    }
    return done;
}

/// After the reader took bytes: wake a writer that found the ring full.
void consumed(tw_conn *c, Ring &in)
{
    in.rewind_if_idle();
    if (in.writer_waiting) {
        in.writer_waiting = false;
        conn_wake_peer(c);
    }
}

/// After the writer added bytes to a ring that was empty: wake the reader.
void produced(tw_conn *c, size_t before, size_t n)
{
    c->stats.bytes_sent += n;
    c->stats.messages_sent++;
    if (before == 0) conn_wake_peer(c);
}

bool buf_fits_v1(const tw_buf *b) { return b && b->size >= TW_BUF_SIZE_V1; }

} // namespace
} // namespace twpair

using namespace twpair;

ssize_t pair_readv(tw_conn *c, const iovec *iov, int iovcnt)
{
    if (!c->up) return not_up(c);
    if (c->recv_lent) return -EBUSY;
    std::lock_guard<std::mutex> lock(c->link->mutex);
    conn_sync(c);
    Ring &in = c->in();
    if (c->rd_shut) return 0;
    if (in.used() == 0) return c->error ? c->error : in.eof ? 0 : -EAGAIN;
    size_t n = copy_out(in, iov, iovcnt);
    if (n == 0) return 0; // an empty iov asks for nothing
    c->stats.bytes_received += n;
    c->stats.messages_received++;
    consumed(c, in);
    return static_cast<ssize_t>(n);
}

ssize_t pair_read(tw_conn *c, void *buf, size_t len)
{
    iovec iov = {buf, len};
    return pair_readv(c, &iov, 1);
}

ssize_t pair_writev(tw_conn *c, const iovec *iov, int iovcnt)
{
    if (!c->up) return not_up(c);
    std::lock_guard<std::mutex> lock(c->link->mutex);
    if (int rc = write_refusal(c); rc < 0) return rc;
    size_t want = total_length(iov, iovcnt);
    if (want == 0) return 0;
    Ring &out = c->out();
    if (out.discard) { // the peer shut down reading: taken and dropped
        c->stats.bytes_sent += want;
        c->stats.messages_sent++;
        return static_cast<ssize_t>(want);
    }
    if (!ensure_storage(out)) return -ENOMEM;
    size_t before = out.used();
    size_t n = copy_in(out, iov, iovcnt, std::min(want, out.free_space()));
    if (n < want) {
        out.writer_waiting = true;
        c->stats.write_would_block++;
    }
    if (n == 0) return -EAGAIN;
    produced(c, before, n);
    return static_cast<ssize_t>(n);
}

ssize_t pair_write(tw_conn *c, const void *buf, size_t len)
{
    iovec iov = {const_cast<void *>(buf), len};
    return pair_writev(c, &iov, 1);
}

int pair_send_buf_get(tw_conn *c, size_t min_len, tw_buf *out)
{
    if (!buf_fits_v1(out)) return -EINVAL;
    if (!c->up) return not_up(c);
    std::lock_guard<std::mutex> lock(c->link->mutex);
    if (int rc = write_refusal(c); rc < 0) return rc;
    Ring &ring = c->out();
    if (min_len > ring.cap) return -EMSGSIZE;
    if (!ensure_storage(ring)) return -ENOMEM;
    ring.rewind_if_idle();
    size_t off = static_cast<size_t>(ring.tail % ring.cap);
    size_t contiguous = std::min(ring.free_space(), ring.cap - off);
    if (contiguous == 0 || contiguous < min_len) {
        ring.writer_waiting = true;
        c->stats.write_would_block++;
        return -EAGAIN;
    }
    // The peer's own memory: filling it is the only copy.
    ring.send_lent = true;
    c->send_lent = true;
    out->data = ring.data.get() + off;
    out->cap = contiguous;
    out->len = 0;
    out->token = ring.tail;
    return 0;
}

int pair_send_buf_submit(tw_conn *c, tw_buf *buf)
{
    if (!buf_fits_v1(buf) || !c->send_lent || !c->link) return -EINVAL;
    std::lock_guard<std::mutex> lock(c->link->mutex);
    Ring &ring = c->out();
    if (buf->token != ring.tail || buf->data != ring.data.get() + ring.tail % ring.cap || buf->len > buf->cap)
        return -EINVAL;
    ring.send_lent = false;
    c->send_lent = false;
    c->stats.zero_copy_sends++;
    conn_sync(c);
    if (c->error) return c->error;
    if (!c->link->end[c->peer_side()])
        return conn_fail(c, -EPIPE, "send_buf_submit", "the peer closed its end before the buffer was submitted");
    if (buf->len == 0) return 0;
    size_t before = ring.used();
    if (!ring.discard) ring.tail += buf->len; // else the peer shut down reading: dropped, as write does
    produced(c, before, buf->len);
    return 0;
}

int pair_recv_buf_borrow(tw_conn *c, tw_buf *out)
{
    if (!buf_fits_v1(out)) return -EINVAL;
    if (c->recv_lent) return -EBUSY;
    if (!c->up) return not_up(c);
    std::lock_guard<std::mutex> lock(c->link->mutex);
    conn_sync(c);
    Ring &in = c->in();
    if (c->rd_shut || in.used() == 0) {
        if (!c->rd_shut && c->error) return c->error;
        if (!c->rd_shut && !in.eof) return -EAGAIN;
        out->data = nullptr; // end-of-stream
        out->len = out->cap = 0;
        out->token = in.head;
        return 0;
    }
    size_t off = static_cast<size_t>(in.head % in.cap);
    in.recv_lent = true;
    c->recv_lent = true;
    out->data = in.data.get() + off;
    out->len = out->cap = std::min(in.used(), in.cap - off);
    out->token = in.head;
    c->stats.zero_copy_recvs++;
    return 0;
}

int pair_recv_buf_return(tw_conn *c, tw_buf *buf, size_t consumed_len)
{
    if (!buf_fits_v1(buf) || !c->recv_lent) return -EINVAL;
    std::lock_guard<std::mutex> lock(c->link->mutex);
    Ring &in = c->in();
    if (buf->token != in.head || buf->data != in.data.get() + in.head % in.cap || consumed_len > buf->len)
        return -EINVAL; // nothing changes
    in.recv_lent = false;
    c->recv_lent = false;
    in.head += consumed_len;
    if (consumed_len) {
        c->stats.bytes_received += consumed_len;
        c->stats.messages_received++;
    }
    consumed(c, in);
    conn_self_wake(c); // what was not consumed is announced again
    return 0;
}
