// SPDX-License-Identifier: MIT
// The handshake: driven by the records that arrive, bounded in time by the
// connection's timer, and when it fails, one log line that says why in
// words a person can act on (OpenSSL's reason, the certificate's subject).
#include "tls.hpp"

#include <twinwire/errors.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>

namespace tls {
namespace {

// A record starts with its content type: 22 handshake, 21 alert.
constexpr unsigned char kRecordHandshake = 22, kRecordAlert = 21;

// Up to 24 bytes as text a log line can hold, for "its first bytes were ...".
std::string quoted(const char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    std::string out = "'";
    for (size_t i = 0; i < n && i < 24; ++i) {
        unsigned char b = static_cast<unsigned char>(p[i]);
        if (b >= 0x20 && b < 0x7f && b != '\\' && b != '\'') {
            out += static_cast<char>(b);
        } else {
            out += "\\x";
            out += hex[b >> 4];
            out += hex[b & 15];
        }
    }
    return out + (n > 24 ? "...'" : "'");
}

const char *role(const tw_conn *c) { return has(c, kServer) ? "client" : "server"; }

void fail_loud(tw_conn *c, int code, const std::string &text)
{
    const tw_host *h = host_of(c);
    h->log(h, TW_LOG_WARN, "TLS %s %s: %s", has(c, kServer) ? "from" : "to", c->peer.c_str(), text.c_str());
    c->t->totals.failed++;
    fail(c, code, "TLS with " + std::string(role(c)) + " " + c->peer + ": " + text);
}

// Refuse a plaintext peer with what it sent (first_bytes_verdict's words).
bool refuse_if_not_tls(tw_conn *c)
{
    if (c->not_tls.empty() && !is_direct(c)) c->not_tls = first_bytes_verdict(c);
    if (c->not_tls.empty()) return false;
    c->t->totals.not_tls++;
    fail_loud(c, -TW_EPEERPROTO, c->not_tls);
    return true;
}

void completed(tw_conn *c)
{
    c->phase = Phase::Up;
    c->flags |= kOweConnected | kWasUp;
    leave_flight(c);
    if (c->timer) host_of(c)->timer_disarm(c->timer);
    c->deadline_ns = 0;
    tw_transport *t = c->t;
    (has(c, kServer) ? t->totals.accepted : t->totals.connected)++;
    note_kernel_tls(c);
    bool resumed = SSL_session_reused(c->ssl) == 1;
    if (resumed) t->totals.resumed++;
    const tw_host *h = t->host;
    if (c->verification.error) // verify = optional: in, but say so
        h->log(h, TW_LOG_WARN, "TLS %s %s: certificate not verified, accepted as tls.verify = optional: %s (%s)",
               has(c, kServer) ? "from" : "to", c->peer.c_str(), X509_verify_cert_error_string(c->verification.error),
               c->verification.subject.c_str());
    if (h->log_enabled(h, TW_LOG_DEBUG))
        h->log(h, TW_LOG_DEBUG, "TLS %s %s: %s %s%s%s", has(c, kServer) ? "from" : "to", c->peer.c_str(),
               SSL_get_version(c->ssl), SSL_get_cipher_name(c->ssl), resumed ? ", resumed" : "",
               has(c, kKtlsSend) ? (has(c, kKtlsReceive) ? ", kTLS both ways" : ", kTLS sending") : "");
}

bool is_peer_refusing_our_certificate(int reason)
{
    switch (reason) {
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
        return true;
    default:
        return false;
    }
}

bool is_not_tls(int reason)
{
    return reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_HTTP_REQUEST ||
           reason == SSL_R_HTTPS_PROXY_REQUEST || reason == SSL_R_PACKET_LENGTH_TOO_LONG;
}

} // namespace

std::string first_bytes_verdict(tw_conn *c)
{
    if (has(c, kFirstBytesSeen)) return "";
    char peeked[24];
    char *p = peeked;
    long n = 0;
    if (is_direct(c)) { // they stay in the socket for OpenSSL
        n = recv(c->fd, peeked, sizeof peeked, MSG_PEEK | MSG_DONTWAIT);
        if (n <= 0) return ""; // nothing yet, or the end: OpenSSL says which
    } else {
        if (BIO_ctrl_pending(c->rbio) == 0) return "";
        n = BIO_get_mem_data(c->rbio, &p);
    }
    c->flags |= kFirstBytesSeen;
    unsigned char first = static_cast<unsigned char>(p[0]);
    if (first == kRecordHandshake || (first == kRecordAlert && !has(c, kServer))) return "";
    if (has(c, kServer))
        return "the client does not speak TLS: its first bytes were " + quoted(p, static_cast<size_t>(n)) +
               " (a plaintext client on a TLS port?)";
    return "the server does not speak TLS: it answered " + quoted(p, static_cast<size_t>(n)) + " (a plaintext port?)";
}

void handshake_step(tw_conn *c)
{
    if (c->phase != Phase::Handshaking || refuse_if_not_tls(c)) return;
    ERR_clear_error();
    int r = SSL_do_handshake(c->ssl);
    if (refuse_if_not_tls(c)) return; // direct: OpenSSL's read met them (direct.cpp)
    int e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_WRITE) c->flags |= kWantsWrite; // direct: the socket is full
    else c->flags &= ~kWantsWrite;
    flush(c); // the next flight, or the alert that tells the peer why
    if (r == 1) return completed(c);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        c->flags &= ~kRxMaybe;
        if (c->inner_error)
            fail(c, c->inner_error,
                 "TLS with " + std::string(role(c)) + " " + c->peer +
                     ": the connection failed during the handshake: " + inner_ops(c).last_error(c->inner));
        else if (has(c, kInnerEof)) fail_loud(c, -ECONNRESET, "the peer closed the connection during the handshake");
        return;
    }
    fail_from_ssl(c, e, "handshake");
}

void fail_from_ssl(tw_conn *c, int ssl_error, const char *during)
{
    const int sys = errno; // direct: what the socket said
    c->flags |= kSslDead;
    int reason = ERR_GET_REASON(ERR_peek_error());
    std::string openssl = drain_errors();
    const Verification &v = c->verification;
    if (is_direct(c) && ssl_error == SSL_ERROR_SYSCALL && sys != 0) {
        if (sys == EPIPE) drop_sigpipe();
        return fail_loud(c, -sys, std::string("the connection failed during the ") + during + ": " + strerror(sys));
    }
    if ((ssl_error == SSL_ERROR_SYSCALL && openssl == "no reason from OpenSSL") ||
        reason == SSL_R_UNEXPECTED_EOF_WHILE_READING)
        return fail_loud(c, -ECONNRESET, std::string("the peer closed the connection during the ") + during);
    if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED && v.error) {
        c->t->totals.verify_failed++;
        return fail_loud(c, -EACCES,
                         std::string("the ") + role(c) + "'s certificate failed verification: " +
                             X509_verify_cert_error_string(v.error) + " (subject " +
                             (v.subject.empty() ? "unknown" : v.subject) + ", depth " + std::to_string(v.depth) + ")");
    }
    if (reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
        c->t->totals.verify_failed++;
        return fail_loud(c, -EACCES, "the client sent no certificate and tls.verify = required");
    }
    if (is_peer_refusing_our_certificate(reason)) {
        c->t->totals.verify_failed++;
        return fail_loud(c, -EACCES, std::string("the ") + role(c) + " refused this end's certificate: " + openssl);
    }
    if (is_not_tls(reason)) {
        c->t->totals.not_tls++;
        return fail_loud(c, -TW_EPEERPROTO, std::string("the ") + role(c) + " does not speak TLS: " + openssl);
    }
    fail_loud(c, -TW_EPEERPROTO, std::string("the TLS ") + during + " failed: " + openssl);
}

} // namespace tls
