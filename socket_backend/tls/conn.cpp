// SPDX-License-Identifier: MIT
// Connections: ciphertext moves between the inner connection and two
// memory BIOs (bounded each way), OpenSSL turns it into the plaintext the
// host reads and writes.  Events the inner connection cannot announce
// (decrypted bytes left over, room to write, a failure) go through the
// loop's active list and the pending-data hooks.
#include "tls.hpp"

#include <twinwire/errors.h>

#include <openssl/err.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <climits>
#include <cstring>
#include <netinet/in.h>
#include <new>
#include <sys/socket.h>
#include <sys/un.h>

namespace tls {
namespace {

constexpr size_t kRxLimit = 256 * 1024; // ciphertext held for OpenSSL before the inner connection is paused
constexpr size_t kTxLimit = 256 * 1024; // ciphertext held for the inner connection before write says -EAGAIN
constexpr size_t kChunk = 64 * 1024;
constexpr uint64_t kLingerNs = 5000000000ull; // a closed connection's close_notify gets this long

uint64_t now_of(const tw_conn *c) { return host_of(c)->now_ns(host_of(c)); }
size_t rx_held(const tw_conn *c) { return BIO_ctrl_pending(c->rbio); }
size_t tx_held(const tw_conn *c) { return BIO_ctrl_pending(c->wbio); }

std::string address_text(const struct sockaddr *sa, uint32_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (!sa || len < sizeof sa->sa_family) return "?";
    if (sa->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
        auto *in = reinterpret_cast<const sockaddr_in *>(sa);
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
        return std::string(ip) + ":" + std::to_string(ntohs(in->sin_port));
    }
    if (sa->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
        auto *in6 = reinterpret_cast<const sockaddr_in6 *>(sa);
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
        return "[" + std::string(ip) + "]:" + std::to_string(ntohs(in6->sin6_port));
    }
    if (sa->sa_family == AF_UNIX) {
        auto *un = reinterpret_cast<const sockaddr_un *>(sa);
        size_t n = len > offsetof(sockaddr_un, sun_path) ? len - offsetof(sockaddr_un, sun_path) : 0;
        if (n && un->sun_path[0] == '\0')
            return "unix:@" + std::string(un->sun_path + 1, strnlen(un->sun_path + 1, n - 1));
        return "unix:" + std::string(un->sun_path, strnlen(un->sun_path, n));
    }
    return "?";
}

void on_timer(tw_timer *, void *arg);
void on_inner(tw_conn *, uint32_t events, void *arg);

void arm_deadline(tw_conn *c, uint64_t delay_ns)
{
    const tw_host *h = host_of(c);
    if (!c->timer && h->timer_add(c->tl->loop, on_timer, c, &c->timer) < 0) return;
    c->deadline_ns = now_of(c) + delay_ns;
    h->timer_arm(c->timer, delay_ns, 0);
}

// The ciphertext of an accepted connection's first flight, plus the settings
// both ends share: a new SSL with its two memory BIOs.
int make_ssl(tw_conn *c, SSL_CTX *ctx)
{
    c->ssl = SSL_new(ctx);
    c->rbio = BIO_new(BIO_s_mem());
    c->wbio = BIO_new(BIO_s_mem());
    if (!c->ssl || !c->rbio || !c->wbio) {
        BIO_free(c->rbio);
        BIO_free(c->wbio);
        c->rbio = c->wbio = nullptr;
        return -ENOMEM;
    }
    // An empty BIO means "not yet", never end-of-file: the inner connection says when it ends.
    BIO_set_mem_eof_return(c->rbio, -1);
    BIO_set_mem_eof_return(c->wbio, -1);
    SSL_set_bio(c->ssl, c->rbio, c->wbio);
    attach_conn(c->ssl, c);
    return 0;
}

void finish_linger(tw_conn *c)
{
    if (c->inner) inner_ops(c).close(c->inner);
    c->inner = nullptr;
    free_conn(c);
}

void on_timer(tw_timer *, void *arg)
{
    tw_conn *c = static_cast<tw_conn *>(arg);
    if (c->phase == Phase::Lingering) return finish_linger(c);
    if (c->phase != Phase::Connecting && c->phase != Phase::Handshaking) return;
    const tw_host *h = host_of(c);
    c->t->totals.timed_out++;
    c->t->totals.failed++;
    std::string text = "the handshake did not complete within " + std::to_string(c->t->settings.handshake_timeout_ms) +
                       " ms (tls.handshake_timeout_ms)";
    h->log(h, TW_LOG_WARN, "TLS %s %s: %s", has(c, kServer) ? "from" : "to", c->peer.c_str(), text.c_str());
    fail(c, -ETIMEDOUT, "TLS with " + std::string(has(c, kServer) ? "client " : "server ") + c->peer + ": " + text);
    deliver(c); // may close c: nothing after it
}

void on_lingering(tw_conn *c, uint32_t events)
{
    if (events & TW_EV_ERROR) return finish_linger(c);
    if (events & TW_EV_READ) { // nobody reads any more: drop what arrives
        char buf[16384];
        ssize_t n;
        while ((n = inner_ops(c).read(c->inner, buf, sizeof buf)) > 0) {
        }
        if (n == 0) c->flags |= kInnerEof; // no more READ from it
    }
    flush(c);
    if (tx_held(c) == 0 || c->inner_error) return finish_linger(c);
    inner_set(c);
}

void on_inner(tw_conn *, uint32_t events, void *arg)
{
    tw_conn *c = static_cast<tw_conn *>(arg);
    if (c->phase == Phase::Lingering) return on_lingering(c, events);
    if (c->phase == Phase::Failed && !c->inner) return;
    if (events & TW_EV_CONNECTED && c->phase == Phase::Connecting) c->phase = Phase::Handshaking;
    if (events & (TW_EV_READ | TW_EV_ERROR)) pull(c);
    if (events & TW_EV_ERROR && !c->inner_error) c->inner_error = inner_ops(c).get_error(c->inner);
    if (events & TW_EV_WRITE) flush(c);
    if (c->phase == Phase::Connecting && c->inner_error) {
        // The inner connect failed (refused, timed out): its code and words are ours.
        fail(c, c->inner_error, inner_ops(c).last_error(c->inner));
    } else if (c->phase == Phase::Handshaking) {
        handshake_step(c);
    } else if (c->phase == Phase::Up && c->inner_error) {
        // Reported now; what arrived before it stays readable (OpenSSL holds it).
        fail(c, c->inner_error, "TLS with " + c->peer + ": " + inner_ops(c).last_error(c->inner));
    }
    if (c->inner) inner_set(c);
    make_active(c);
    deliver(c); // may close c: nothing after it
}

// What SSL_read's failure means for the host; fails the connection when it is one.
ssize_t read_failed(tw_conn *c, int r)
{
    int e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_ZERO_RETURN) return 0; // the peer's close_notify: end of stream
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

tw_conn *new_conn(tw_transport *t, tw_transport_loop *tl, bool server)
{
    tw_conn *c = new (std::nothrow) tw_conn{};
    if (!c) return nullptr;
    c->t = t;
    c->tl = tl;
    if (server) c->flags |= kServer;
    if (make_ssl(c, server ? t->ctx.server : t->ctx.client) < 0) {
        SSL_free(c->ssl);
        delete c;
        return nullptr;
    }
    t->totals.open++;
    return c;
}

void leave_flight(tw_conn *c)
{
    if (!has(c, kInFlight)) return;
    c->flags &= ~kInFlight;
    c->t->handshakes_in_flight--;
}

void fail(tw_conn *c, int code, const std::string &text)
{
    if (c->phase == Phase::Failed || c->phase == Phase::Lingering) return;
    bool was_up = c->phase == Phase::Up;
    c->phase = Phase::Failed;
    c->failure = {code, text};
    c->flags |= kOweError | kRxMaybe;
    if (!was_up) c->flags = (c->flags & ~kOweConnected) | kSslDead; // no session to read from
    leave_flight(c);
    if (c->timer) host_of(c)->timer_disarm(c->timer);
    if (c->inner) {
        flush(c); // the alert, when OpenSSL wrote one: the peer learns why
        inner_ops(c).close(c->inner);
        c->inner = nullptr;
    }
    make_active(c);
}

void pull(tw_conn *c)
{
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
    if (!has(c, kInnerEof) && !c->inner_error && rx_held(c) < kRxLimit) ev |= TW_EV_READ;
    if (tx_held(c) > 0 && !c->inner_error) ev |= TW_EV_WRITE;
    if (ev != c->inner_events) {
        c->inner_events = ev;
        inner_ops(c).set_events(c->inner, ev);
    }
}

uint32_t own_events(tw_conn *c)
{
    if (!c->cb) return 0;
    uint32_t ev = 0;
    if (has(c, kOweConnected)) ev |= TW_EV_CONNECTED;
    if (has(c, kOweError)) ev |= TW_EV_ERROR;
    if (c->phase == Phase::Failed) return has(c, kWasUp) ? ev | (c->want & (TW_EV_READ | TW_EV_WRITE)) : ev;
    if (c->phase != Phase::Up) return ev;
    if ((c->want & TW_EV_READ) && (has(c, kRxMaybe) || SSL_pending(c->ssl) > 0)) ev |= TW_EV_READ;
    if ((c->want & TW_EV_WRITE) && (has(c, kShutWr) || tx_held(c) < kTxLimit)) ev |= TW_EV_WRITE;
    return ev;
}

void make_active(tw_conn *c)
{
    if (has(c, kInActive) || !c->cb) return;
    c->flags |= kInActive;
    c->tl->active.push_back(c);
}

void deliver(tw_conn *c)
{
    uint32_t ev = own_events(c);
    if (!ev) return;
    c->flags &= ~(kOweConnected | kOweError);
    c->cb(c, ev, c->arg);
}

void free_conn(tw_conn *c)
{
    leave_flight(c);
    if (c->timer) host_of(c)->timer_del(c->timer);
    auto &a = c->tl->active;
    a.erase(std::remove(a.begin(), a.end(), c), a.end());
    auto &l = c->tl->lingering;
    l.erase(std::remove(l.begin(), l.end(), c), l.end());
    SSL_free(c->ssl); // and both BIOs
    c->t->totals.open--;
    delete c;
}

void start_accepted(void *conn)
{
    tw_conn *c = static_cast<tw_conn *>(conn);
    c->flags &= ~kStartPending;
    if (has(c, kClosedEarly)) return free_conn(c); // the host closed it before this task ran
    if (has(c, kInnerHooked)) return;
    c->flags |= kInnerHooked;
    sockaddr_storage peer{};
    uint32_t len = sizeof peer;
    if (c->inner && inner_ops(c).peer_addr(c->inner, reinterpret_cast<sockaddr *>(&peer), &len) == 0)
        c->peer = address_text(reinterpret_cast<sockaddr *>(&peer), len);
    else c->peer = "?";
    if (has(c, kTooBusy)) {
        const tw_host *h = host_of(c);
        std::string text = "refused: " + std::to_string(c->t->settings.max_handshakes) +
                           " handshakes already in flight (tls.max_handshakes)";
        h->log(h, TW_LOG_WARN, "TLS from %s: %s", c->peer.c_str(), text.c_str());
        c->t->totals.refused_busy++;
        fail(c, -ECONNABORTED, "TLS with client " + c->peer + ": " + text);
        return;
    }
    arm_deadline(c, c->t->settings.handshake_timeout_ms * 1000000ull);
    inner_ops(c).set_callback(c->inner, on_inner, c);
}

} // namespace tls

using namespace tls;

extern "C" int tls_connect(tw_transport_loop *tl, const struct tw_connect_params *params, tw_conn **out)
{
    if (!params || params->size < TW_CONNECT_PARAMS_SIZE_V1 || !params->addr) return -EINVAL;
    tw_transport *t = tl->t;
    const Settings &s = t->settings;
    tw_conn *c = new_conn(t, tl, false);
    if (!c) return -ENOMEM;
    c->peer = address_text(params->addr, params->addrlen);
    if (!s.server_name.empty()) {
        SSL_set_tlsext_host_name(c->ssl, s.server_name.c_str());
        if (s.verify != Verify::Off) SSL_set1_host(c->ssl, s.server_name.c_str());
    } else if (s.verify != Verify::Off && (params->addr->sa_family == AF_INET || params->addr->sa_family == AF_INET6)) {
        // No name: the certificate must name the address connected to.
        std::string ip = c->peer.substr(0, c->peer.rfind(':'));
        if (ip.size() > 2 && ip.front() == '[') ip = ip.substr(1, ip.size() - 2);
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), ip.c_str());
    }
    if (s.session_resumption) {
        c->session_key = c->peer + "|" + s.server_name;
        if (SSL_SESSION *session = t->sessions.get(c->session_key)) {
            SSL_set_session(c->ssl, session);
            SSL_SESSION_free(session);
        }
    }
    SSL_set_connect_state(c->ssl);
    int rc = t->inner->connect(tl->inner, params, &c->inner);
    if (rc < 0) {
        c->inner = nullptr;
        free_conn(c);
        return rc;
    }
    // The handshake's bound starts now: a connect that never answers is the
    // inner transport's to time out (params->timeout_ms), with its own code.
    arm_deadline(c, s.handshake_timeout_ms * 1000000ull + params->timeout_ms * 1000000ull);
    *out = c;
    return 0;
}

extern "C" int tls_set_callback(tw_conn *c, tw_conn_cb cb, void *arg)
{
    c->cb = cb;
    c->arg = arg;
    if (has(c, kServer)) {
        start_accepted(c); // when the loop could not run it before (it was stopping)
    } else if (!has(c, kInnerHooked) && c->inner) {
        c->flags |= kInnerHooked;
        inner_ops(c).set_callback(c->inner, on_inner, c);
    }
    make_active(c);
    return 0;
}

extern "C" int tls_set_events(tw_conn *c, uint32_t events)
{
    c->want = events & (TW_EV_READ | TW_EV_WRITE);
    make_active(c);
    return 0;
}

extern "C" ssize_t tls_read(tw_conn *c, void *buf, size_t len)
{
    if (c->phase == Phase::Connecting || c->phase == Phase::Handshaking) return -EAGAIN;
    if (c->phase == Phase::Failed && has(c, kSslDead)) return c->failure.code;
    if (!len) return 0;
    const int want = static_cast<int>(std::min<size_t>(len, INT_MAX));
    ERR_clear_error();
    int r = SSL_read(c->ssl, buf, want);
    // Out of records: take what the inner connection has and try once more
    // (asking it only then saves a read call per record).
    if (r <= 0 && SSL_get_error(c->ssl, r) == SSL_ERROR_WANT_READ && c->inner) {
        size_t before = rx_held(c);
        pull(c);
        if (rx_held(c) != before) {
            ERR_clear_error();
            r = SSL_read(c->ssl, buf, want);
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
    return read_failed(c, r);
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
    size_t held = tx_held(c);
    if (held >= kTxLimit) {
        c->counters.would_block++;
        inner_set(c);
        return -EAGAIN;
    }
    if (!len) return 0;
    // The memory BIO takes every record, so SSL_write never half-succeeds:
    // the bound is ours, on what waits for the inner connection.
    size_t n = std::min(len, kTxLimit - held);
    if (n < len) c->counters.would_block++;
    ERR_clear_error();
    int r = SSL_write(c->ssl, buf, static_cast<int>(n));
    if (r <= 0) {
        fail_from_ssl(c, SSL_get_error(c->ssl, r), "session");
        return c->failure.code;
    }
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
    thread_local std::string staged;
    staged.clear();
    for (int i = 0; i < iovcnt && staged.size() < kTxLimit; ++i)
        staged.append(static_cast<const char *>(iov[i].iov_base), std::min(iov[i].iov_len, kTxLimit - staged.size()));
    return tls_write(c, staged.data(), staged.size());
}

extern "C" int tls_shutdown(tw_conn *c, int how)
{
    if (c->phase == Phase::Failed) return c->failure.code;
    if (c->phase != Phase::Up || !c->inner) return -ENOTCONN;
    if ((how == SHUT_WR || how == SHUT_RDWR) && !has(c, kShutWr)) {
        c->flags |= kShutWr | kShutWrInner;
        ERR_clear_error();
        SSL_shutdown(c->ssl); // queues close_notify; reading goes on
        ERR_clear_error();
        flush(c);
        inner_set(c);
    }
    if (how == SHUT_RD || how == SHUT_RDWR) return inner_ops(c).shutdown(c->inner, SHUT_RD);
    return 0;
}

extern "C" void tls_close(tw_conn *c)
{
    c->cb = nullptr;
    if (has(c, kStartPending)) { // start_accepted has yet to run: it frees the rest
        c->flags |= kClosedEarly;
        if (c->inner) inner_ops(c).close(c->inner);
        c->inner = nullptr;
        return;
    }
    auto &a = c->tl->active;
    a.erase(std::remove(a.begin(), a.end(), c), a.end());
    c->flags &= ~kInActive;
    if (c->phase == Phase::Up && c->inner && !c->inner_error) {
        if (!has(c, kShutWr)) {
            ERR_clear_error();
            SSL_shutdown(c->ssl);
            ERR_clear_error();
        }
        flush(c);
        if (tx_held(c) > 0) { // the inner connection is full: linger until it takes the rest
            c->phase = Phase::Lingering;
            c->tl->lingering.push_back(c);
            arm_deadline(c, kLingerNs);
            inner_set(c);
            return;
        }
    }
    finish_linger(c);
}

extern "C" int tls_get_error(tw_conn *c) { return c->phase == Phase::Failed ? c->failure.code : 0; }

extern "C" const char *tls_last_error(tw_conn *c)
{
    if (c->phase == Phase::Failed) return c->failure.text.c_str();
    return c->inner ? inner_ops(c).last_error(c->inner) : "";
}

extern "C" int tls_local_addr(tw_conn *c, struct sockaddr *addr, uint32_t *addrlen)
{
    return c->inner ? inner_ops(c).local_addr(c->inner, addr, addrlen) : -ENOTCONN;
}

extern "C" int tls_peer_addr(tw_conn *c, struct sockaddr *addr, uint32_t *addrlen)
{
    return c->inner ? inner_ops(c).peer_addr(c->inner, addr, addrlen) : -ENOTCONN;
}

extern "C" int tls_get_stats(tw_conn *c, struct tw_conn_stats *out)
{
    if (!out || out->size < 8) return -EINVAL;
    tw_conn_stats full{};
    full.size = out->size;
    full.version = TW_CONN_STATS_VERSION;
    full.bytes_sent = c->counters.bytes_sent;
    full.bytes_received = c->counters.bytes_received;
    full.messages_sent = c->counters.writes;
    full.messages_received = c->counters.reads;
    full.write_would_block = c->counters.would_block;
    std::memcpy(out, &full, std::min<size_t>(out->size, sizeof full));
    return 0;
}
