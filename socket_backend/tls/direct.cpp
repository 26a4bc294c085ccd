// SPDX-License-Identifier: MIT
// Direct sessions: over a TCP inner connection, where the kernel offers the
// tls ULP, the session reads and writes the socket itself so that OpenSSL
// can hand the record layer to the kernel (kTLS, SSL_OP_ENABLE_KTLS).  The
// inner connection stays: it announces readiness and owns the socket.
//
// Only TLS 1.2 sessions go to the kernel.  A TLS 1.3 peer may ask for new
// keys (KeyUpdate) at any time; OpenSSL 3.0 cannot give them to the kernel
// (Linux 6.1) and goes on sealing with the old ones, so the peer fails the
// session on a bad record MAC (seen in the SoftRoCE guest).
//
// OpenSSL writes a socket with write(2), which raises SIGPIPE when the peer
// has reset it; a loop thread that runs direct sessions blocks SIGPIPE, and
// one raised by OpenSSL is taken back at once (drop_sigpipe).
#include "tls.hpp"

#include <openssl/err.h>

#include <cerrno>
#include <csignal>
#include <netinet/in.h>
#include <sys/socket.h>

namespace tls {
namespace {

void block_sigpipe(tw_transport_loop *tl)
{
    pthread_t self = pthread_self();
    if (tl->sigpipe_blocked && pthread_equal(tl->sigpipe_blocked_on, self)) return;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    tl->sigpipe_blocked = true;
    tl->sigpipe_blocked_on = self;
}

// Before each read of OpenSSL's until the peer's first bytes were seen:
// a plaintext peer is refused with what it sent, before OpenSSL reads it.
long check_first_bytes(BIO *b, int oper, const char *, size_t, int, long, int ret, size_t *)
{
    if (oper != BIO_CB_READ) return ret; // before the read only
    tw_conn *c = reinterpret_cast<tw_conn *>(BIO_get_callback_arg(b));
    if (has(c, kFirstBytesSeen) || !c->not_tls.empty()) return c->not_tls.empty() ? ret : -1;
    c->not_tls = first_bytes_verdict(c);
    return c->not_tls.empty() ? ret : -1; // handshake_step reports it
}

// Once the version is chosen, before the keys are: TLS 1.2 goes to the kernel.
void offer_kernel_tls12(const SSL *ssl, int where, int)
{
    if (!(where & SSL_CB_LOOP) || SSL_version(ssl) != TLS1_2_VERSION) return;
    SSL *s = const_cast<SSL *>(ssl);
    if (!(SSL_get_options(s) & SSL_OP_ENABLE_KTLS)) SSL_set_options(s, SSL_OP_ENABLE_KTLS);
}

int tcp_socket_of(tw_conn *c)
{
    int fd = -1;
    if (inner_ops(c).ctrl(c->t->inner_t, c->inner, nullptr, TW_CTRL_GET_FD, &fd, sizeof fd) < 0 || fd < 0) return -1;
    int protocol = 0;
    socklen_t len = sizeof protocol;
    if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) < 0 || protocol != IPPROTO_TCP) return -1;
    return fd;
}

} // namespace

void go_direct(tw_conn *c)
{
    if (!c->t->kernel_tls || is_direct(c) || !c->inner) return;
    if (BIO_ctrl_pending(c->rbio) || BIO_ctrl_pending(c->wbio)) return; // records moved already
    int fd = tcp_socket_of(c);
    if (fd < 0) return;
    BIO *socket = BIO_new_socket(fd, BIO_NOCLOSE); // the inner connection closes it
    if (!socket) return;                           // stays on memory BIOs
    BIO_set_callback_ex(socket, check_first_bytes);
    BIO_set_callback_arg(socket, reinterpret_cast<char *>(c));
    SSL_set_bio(c->ssl, socket, socket); // frees the memory BIOs
    c->rbio = c->wbio = nullptr;
    c->fd = fd;
    SSL_set_info_callback(c->ssl, offer_kernel_tls12);
    block_sigpipe(c->tl);
    c->t->totals.direct++;
}

void note_kernel_tls(tw_conn *c)
{
    if (!is_direct(c)) return;
    BIO_set_callback_ex(SSL_get_rbio(c->ssl), nullptr); // the first bytes were TLS
    if (BIO_get_ktls_send(SSL_get_wbio(c->ssl))) {
        c->flags |= kKtlsSend;
        c->t->totals.ktls_send++;
    }
    if (BIO_get_ktls_recv(SSL_get_rbio(c->ssl))) {
        c->flags |= kKtlsReceive;
        c->t->totals.ktls_receive++;
    } else {
        // OpenSSL opens the records: one read takes all the socket has,
        // not a header and then a body per record.
        SSL_set_read_ahead(c->ssl, 1);
    }
}

bool drain_direct(tw_conn *c)
{
    if (has(c, kSslDead) || !c->inner) return true;
    char sink[16384];
    for (size_t taken = 0; taken < kRxLimit;) {
        ERR_clear_error();
        int r = SSL_read(c->ssl, sink, sizeof sink);
        if (r > 0) {
            taken += static_cast<size_t>(r);
            continue;
        }
        int e = SSL_get_error(c->ssl, r);
        ERR_clear_error();
        return e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE;
    }
    return false;
}

void discard_input(tw_conn *c)
{
    char sink[16384];
    for (size_t taken = 0; taken < kRxLimit;) {
        ssize_t n = recv(c->fd, sink, sizeof sink, MSG_DONTWAIT);
        if (n <= 0) return;
        taken += static_cast<size_t>(n);
    }
}

void drop_sigpipe()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    timespec none{};
    while (sigtimedwait(&set, nullptr, &none) == SIGPIPE) {
    }
}

int ssl_write_all(tw_conn *c, const void *buf, int n)
{
    const void *from = buf;
    if (is_direct(c)) {
        // With kTLS sending, OpenSSL keeps a pointer into the buffer of a
        // write the socket did not take: it has to be ours, not the host's.
        c->pending_write.assign(static_cast<const char *>(buf), static_cast<size_t>(n));
        from = c->pending_write.data();
    }
    ERR_clear_error();
    int r = SSL_write(c->ssl, from, n);
    if (r > 0) {
        c->pending_write.clear(); // keeps its capacity for the next write
        return r;
    }
    int e = SSL_get_error(c->ssl, r);
    if (is_direct(c) && e == SSL_ERROR_WANT_WRITE) return n; // the rest goes when the socket has room
    c->pending_write.clear();
    fail_from_ssl(c, e, "session");
    return c->failure.code;
}

void flush_direct(tw_conn *c)
{
    if (has(c, kSslDead)) { // failed: nothing more goes out
        c->pending_write.clear();
        c->flags &= ~kCloseNotifyOwed;
        return;
    }
    while (!c->pending_write.empty()) {
        ERR_clear_error();
        int r = SSL_write(c->ssl, c->pending_write.data(), static_cast<int>(c->pending_write.size()));
        if (r > 0) {
            c->pending_write.clear(); // not partial-write mode: all of it
            continue;
        }
        int e = SSL_get_error(c->ssl, r);
        if (e != SSL_ERROR_WANT_WRITE) fail_from_ssl(c, e, "session");
        return;
    }
    if (has(c, kStaged) && seal_staged(c) < 0) return;
    if (!c->pending_write.empty()) return;
    if (has(c, kCloseNotifyOwed)) {
        ERR_clear_error();
        int r = SSL_shutdown(c->ssl);
        if (r < 0 && SSL_get_error(c->ssl, r) == SSL_ERROR_WANT_WRITE) return;
        if (r < 0 && errno == EPIPE) drop_sigpipe();
        ERR_clear_error();
        c->flags &= ~kCloseNotifyOwed;
    }
    if (has(c, kShutWrInner) && c->inner) {
        c->flags &= ~kShutWrInner;
        inner_ops(c).shutdown(c->inner, SHUT_WR);
    }
}

uint32_t direct_inner_events(const tw_conn *c)
{
    if (c->inner_error) return 0;
    uint32_t ev = 0;
    bool reading = c->phase == Phase::Handshaking ||
                   (c->phase == Phase::Up && (c->want & TW_EV_READ) && !has(c, kRxMaybe)) ||
                   (c->phase == Phase::Lingering && !has(c, kInnerEof)); // drained (drain_direct)
    if (reading) ev |= TW_EV_READ;
    if (tx_held(c) > 0 || (c->phase == Phase::Handshaking && has(c, kWantsWrite))) ev |= TW_EV_WRITE;
    return ev;
}

void queue_close_notify(tw_conn *c)
{
    if (is_direct(c)) {
        c->flags |= kCloseNotifyOwed; // after the pending write: flush_direct
        return;
    }
    ERR_clear_error();
    SSL_shutdown(c->ssl); // into wbio; reading goes on
    ERR_clear_error();
}

} // namespace tls
