// SPDX-License-Identifier: MIT
// Connections: their life (connect or accept, handshake, up, failed,
// lingering after close) and their events.  Events the inner connection
// cannot announce (decrypted bytes left over, room to write, a failure) go
// through the loop's active list and the pending-data hooks.
#include "tls.hpp"

#include <twinwire/errors.h>

#include <openssl/err.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <new>
#include <sys/socket.h>
#include <sys/un.h>

namespace tls {
namespace {

constexpr uint64_t kLingerNs = 5000000000ull; // a closed connection's close_notify gets this long

uint64_t now_of(const tw_conn *c) { return host_of(c)->now_ns(host_of(c)); }

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
int make_ssl(tw_conn *c, bool server)
{
    c->ssl = c->t->credentials.new_ssl(server);
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
    if (is_direct(c) && c->inner && !c->inner_error) drain_direct(c);
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
    if (events & TW_EV_READ && is_direct(c)) {
        if (drain_direct(c)) c->flags |= kInnerEof;
    } else if (events & TW_EV_READ) { // nobody reads any more: drop what arrives
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
    if (events & TW_EV_CONNECTED && c->phase == Phase::Connecting) {
        c->phase = Phase::Handshaking;
        go_direct(c);
    }
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

} // namespace

tw_conn *new_conn(tw_transport *t, tw_transport_loop *tl, bool server)
{
    tw_conn *c = new (std::nothrow) tw_conn{};
    if (!c) return nullptr;
    c->t = t;
    c->tl = tl;
    if (server) c->flags |= kServer;
    if (make_ssl(c, server) < 0) {
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
        if (is_direct(c)) discard_input(c);
        inner_ops(c).close(c->inner);
        c->inner = nullptr;
    }
    make_active(c);
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
    if ((c->want & TW_EV_WRITE) && (has(c, kShutWr) || out_held(c) < kTxLimit)) ev |= TW_EV_WRITE;
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
    auto &st = c->tl->staging;
    st.erase(std::remove(st.begin(), st.end(), c), st.end());
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
    go_direct(c);
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
    if (is_direct(c) && c->inner) inner_set(c); // the socket's READ follows what the host wants
    make_active(c);
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
    seal_staged(c); // accepted writes go out before close_notify
    if (c->phase == Phase::Up && c->inner && !c->inner_error) {
        if (!has(c, kShutWr)) queue_close_notify(c);
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
