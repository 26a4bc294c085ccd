// SPDX-License-Identifier: MIT
// Records: ciphertext moves between the inner connection and two memory
// BIOs, bounded each way (kRxLimit, kTxLimit); OpenSSL turns it into the
// plaintext the host reads and writes.  A direct session (direct.cpp) has
// OpenSSL on the socket instead.  Small writes that follow another in the
// same loop turn are staged and sealed together, in records of 16 KiB.
#include "tls.hpp"

#include <twinwire/errors.h>

#include <openssl/err.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <sys/socket.h>

namespace tls {
namespace {

// What SSL_read's failure (and errno right after it) means for the host;
// fails the connection when it is one.
ssize_t read_failed(tw_conn *c, int r, int sys)
{
    int e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_ZERO_RETURN) return 0; // the peer's close_notify: end of stream
    if (is_direct(c) && peer_ended_stream(e, sys)) {
        c->flags |= kSslDead;
        fail(c, -ECONNRESET,
             "TLS with " + c->peer + ": the peer closed the connection without close_notify (data may be cut short)");
        return c->failure.code;
    }
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        if (c->inner_error) {
            fail(c, c->inner_error, std::string("TLS: ") + (c->inner ? inner_ops(c).last_error(c->inner) : ""));
            return c->failure.code;
        }
        if (has(c, kInnerEof)) {
            fail(c, -ECONNRESET,
                 "TLS with " + c->peer +
                     ": the peer closed the connection without close_notify (data may be cut short)");
            return c->failure.code;
        }
        c->flags &= ~kRxMaybe;
        if (c->inner) inner_set(c);
        return -EAGAIN;
    }
    fail_from_ssl(c, e, "session");
    return c->failure.code;
}

} // namespace

bool peer_ended_stream(int ssl_error, int sys)
{
    if (ssl_error == SSL_ERROR_SYSCALL && sys == 0 && ERR_peek_error() == 0) return true;
    return ssl_error == SSL_ERROR_SSL && ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

void pull(tw_conn *c)
{
    if (is_direct(c)) { // OpenSSL reads the socket itself: say it may have something
        c->flags |= kRxMaybe;
        return;
    }
    char buf[kChunk];
    while (c->inner && !has(c, kInnerEof) && !c->inner_error && rx_held(c) < kRxLimit) {
        ssize_t n = inner_ops(c).read(c->inner, buf, sizeof buf);
        if (n == -EAGAIN) break;
        c->flags |= kRxMaybe;
        if (n > 0) BIO_write(c->rbio, buf, static_cast<int>(n));
        else if (n == 0) c->flags |= kInnerEof;
        else c->inner_error = static_cast<int>(n);
    }
}

void flush(tw_conn *c)
{
    if (is_direct(c)) return flush_direct(c);
    // Our close_notify and the inner SHUT_WR are out: what OpenSSL writes
    // now (an answer to the peer's KeyUpdate, an alert) has nowhere to go,
    // and writing it would fail the connection the peer still sends on.
    if (has(c, kShutWr) && !has(c, kShutWrInner)) {
        (void)BIO_reset(c->wbio);
        return;
    }
    while (c->inner && !c->inner_error && tx_held(c) > 0) {
        char *p = nullptr;
        long held = BIO_get_mem_data(c->wbio, &p);
        ssize_t w = inner_ops(c).write(c->inner, p, static_cast<size_t>(held));
        if (w == -EAGAIN) break; // the inner TW_EV_WRITE resumes it
        if (w < 0) {             // the inner connection failed: it reports TW_EV_ERROR itself
            c->inner_error = static_cast<int>(w);
            break;
        }
        if (w == held) {
            (void)BIO_reset(c->wbio);
        } else {
            char sink[kChunk];
            for (long left = w; left > 0;) {
                int got = BIO_read(c->wbio, sink, static_cast<int>(std::min<long>(left, kChunk)));
                if (got <= 0) break;
                left -= got;
            }
        }
    }
    if (has(c, kShutWrInner) && c->inner && tx_held(c) == 0) {
        c->flags &= ~kShutWrInner;
        inner_ops(c).shutdown(c->inner, SHUT_WR);
    }
}

void inner_set(tw_conn *c)
{
    uint32_t ev = 0;
    if (is_direct(c)) {
        ev = direct_inner_events(c);
    } else {
        if (!has(c, kInnerEof) && !c->inner_error && rx_held(c) < kRxLimit) ev |= TW_EV_READ;
        if (tx_held(c) > 0 && !c->inner_error) ev |= TW_EV_WRITE;
    }
    if (ev != c->inner_events) {
        c->inner_events = ev;
        inner_ops(c).set_events(c->inner, ev);
    }
}

int seal_staged(tw_conn *c)
{
    if (!has(c, kStaged)) return 0;
    if (!c->pending_write.empty()) return 0; // sealed once it is out (flush_direct), in stream order
    c->flags &= ~kStaged;                    // its entry in the loop's list is skipped or erased
    std::string text;
    text.swap(c->staged);
    if (c->phase != Phase::Up || has(c, kSslDead)) return c->failure.code; // failed meanwhile: nothing to send
    if (int r = ssl_write_all(c, text.data(), static_cast<int>(text.size())); r < 0) return r;
    flush(c);
    if (c->inner) inner_set(c);
    text.clear();
    if (c->staged.capacity() == 0) c->staged.swap(text); // keep the buffer for the next turn
    return 0;
}

void seal_all_staged(tw_transport_loop *tl)
{
    std::vector<tw_conn *> batch;
    batch.swap(tl->staging);
    // A failure makes a connection active; none is freed here.
    for (tw_conn *c : batch) seal_staged(c);
}

} // namespace tls

using namespace tls;

extern "C" ssize_t tls_read(tw_conn *c, void *buf, size_t len)
{
    if (c->phase == Phase::Connecting || c->phase == Phase::Handshaking) return -EAGAIN;
    if (c->phase == Phase::Failed && has(c, kSslDead)) return c->failure.code;
    if (!len) return 0;
    const int want = static_cast<int>(std::min<size_t>(len, INT_MAX));
    ERR_clear_error();
    int r = SSL_read(c->ssl, buf, want);
    int sys = errno; // direct: what the socket said
    // Out of records: take what the inner connection has and try once more
    // (asking it only then saves a read call per record).
    if (r <= 0 && !is_direct(c) && SSL_get_error(c->ssl, r) == SSL_ERROR_WANT_READ && c->inner) {
        size_t before = rx_held(c);
        pull(c);
        if (rx_held(c) != before) {
            ERR_clear_error();
            r = SSL_read(c->ssl, buf, want);
            sys = errno;
        }
    }
    if (tx_held(c)) flush(c); // a KeyUpdate answer, an alert
    if (r > 0) {
        c->counters.reads++;
        c->counters.bytes_received += static_cast<uint64_t>(r);
        if (c->inner) inner_set(c);
        make_active(c); // more may be there: level-triggered
        return r;
    }
    if (c->phase == Phase::Failed) return SSL_get_error(c->ssl, r) == SSL_ERROR_ZERO_RETURN ? 0 : c->failure.code;
    if (is_direct(c) && SSL_get_error(c->ssl, r) == SSL_ERROR_SYSCALL && sys != 0) {
        if (sys == EPIPE) drop_sigpipe();
        c->flags |= kSslDead;
        fail(c, -sys, "TLS with " + c->peer + ": " + strerror(sys));
        return c->failure.code;
    }
    return read_failed(c, r, sys);
}

extern "C" ssize_t tls_readv(tw_conn *c, const struct iovec *iov, int iovcnt)
{
    ssize_t total = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (!iov[i].iov_len) continue;
        ssize_t r = tls_read(c, iov[i].iov_base, iov[i].iov_len);
        if (r <= 0) return total ? total : r;
        total += r;
        if (static_cast<size_t>(r) < iov[i].iov_len) break;
    }
    return total;
}

extern "C" ssize_t tls_write(tw_conn *c, const void *buf, size_t len)
{
    if (c->phase == Phase::Failed) return c->failure.code;
    if (c->phase != Phase::Up) return -EAGAIN;
    if (has(c, kShutWr)) return -EPIPE;
    if (c->inner_error) return c->inner_error;
    size_t held = out_held(c);
    // Direct: OpenSSL has to finish the pending write before it takes another.
    if (held >= kTxLimit || !c->pending_write.empty()) {
        c->counters.would_block++;
        inner_set(c);
        return -EAGAIN;
    }
    if (!len) return 0;
    // The memory BIO takes every record, so SSL_write never half-succeeds:
    // the bound is ours, on what waits for the inner connection.
    size_t n = std::min(len, kTxLimit - held);
    if (n < len) c->counters.would_block++;
    // The first write of a loop turn goes out at once (a request, a reply);
    // small ones that follow it in the same turn wait to share a record.
    bool follows = c->written_turn == c->tl->turn;
    c->written_turn = c->tl->turn;
    if (follows && n < kStageBelow) {
        if (c->staged.size() + n > kStageMax) {
            if (int rc = seal_staged(c); rc < 0) return rc;
        }
        c->staged.append(static_cast<const char *>(buf), n);
        if (!has(c, kStaged)) {
            c->flags |= kStaged;
            c->tl->staging.push_back(c);
        }
        c->counters.writes++;
        c->counters.bytes_sent += n;
        return static_cast<ssize_t>(n);
    }
    // In stream order: what was staged goes first.
    if (int rc = seal_staged(c); rc < 0) return rc;
    if (!c->pending_write.empty()) { // direct: it did not all go out
        c->counters.would_block++;
        inner_set(c);
        return -EAGAIN;
    }
    int r = ssl_write_all(c, buf, static_cast<int>(n));
    if (r < 0) return r;
    c->counters.writes++;
    c->counters.bytes_sent += static_cast<uint64_t>(r);
    flush(c);
    if (c->inner) inner_set(c);
    return r;
}

extern "C" ssize_t tls_writev(tw_conn *c, const struct iovec *iov, int iovcnt)
{
    if (iovcnt == 1) return tls_write(c, iov[0].iov_base, iov[0].iov_len);
    // One SSL_write for the lot: small pieces would each become a record.
    std::string &gather = c->tl->gather;
    gather.clear();
    for (int i = 0; i < iovcnt && gather.size() < kTxLimit; ++i)
        gather.append(static_cast<const char *>(iov[i].iov_base), std::min(iov[i].iov_len, kTxLimit - gather.size()));
    return tls_write(c, gather.data(), gather.size());
}

extern "C" int tls_shutdown(tw_conn *c, int how)
{
    if (c->phase == Phase::Failed) return c->failure.code;
    if (c->phase != Phase::Up || !c->inner) return -ENOTCONN;
    if ((how == SHUT_WR || how == SHUT_RDWR) && !has(c, kShutWr)) {
        if (int rc = seal_staged(c); rc < 0) return rc;
        c->flags |= kShutWr | kShutWrInner;
        queue_close_notify(c); // reading goes on
        flush(c);
        inner_set(c);
    }
    if (how == SHUT_RD || how == SHUT_RDWR) return inner_ops(c).shutdown(c->inner, SHUT_RD);
    return 0;
}
