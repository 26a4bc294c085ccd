// SPDX-License-Identifier: MIT
// The tls transport as a whole: its settings and SSL contexts, the inner
// transport it wraps (from the host's transport_ops service), its loops,
// totals and private ctrl operations.
#include "tls.hpp"

#include <inner_describe.hpp>
#include <stacked_loop.hpp>
#include <twinwire/tls.h>

#include <openssl/crypto.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

namespace {

void set_why(char *why, size_t len, const std::string &text)
{
    if (why && len) snprintf(why, len, "%s", text.c_str());
}

void copy_text(char *out, size_t cap, const char *text) { snprintf(out, cap, "%s", text ? text : ""); }

int session_info(tw_conn *c, void *data, size_t len)
{
    auto *out = static_cast<tw_tls_session *>(data);
    if (!c || !out || len < 8 || out->size < 8 || out->size > len) return -EINVAL;
    if (c->phase != tls::Phase::Up) return -ENOTCONN;
    tw_tls_session full{};
    full.size = out->size;
    full.version = 2;
    full.kernel_tls =
        (has(c, tls::kKtlsSend) ? TW_TLS_KTLS_SEND : 0u) | (has(c, tls::kKtlsReceive) ? TW_TLS_KTLS_RECEIVE : 0u);
    full.resumed = SSL_session_reused(c->ssl) == 1;
    full.verify_result = static_cast<int32_t>(SSL_get_verify_result(c->ssl));
    copy_text(full.protocol, sizeof full.protocol, SSL_get_version(c->ssl));
    copy_text(full.cipher, sizeof full.cipher, SSL_get_cipher_name(c->ssl));
    X509 *peer = SSL_get1_peer_certificate(c->ssl);
    copy_text(full.peer_subject, sizeof full.peer_subject, tls::subject_of(peer).c_str());
    X509_free(peer);
    std::memcpy(out, &full, std::min<size_t>(out->size, sizeof full));
    return 0;
}

int transport_stats(tw_transport *t, void *data, size_t len)
{
    auto *out = static_cast<tw_transport_stats *>(data);
    if (!out || len < 8 || out->size < 8 || out->size > len) return -EINVAL;
    tw_transport_stats full{};
    full.size = out->size;
    full.version = TW_TRANSPORT_STATS_VERSION;
    full.connections_open = t->totals.open;
    full.connections_accepted = t->totals.accepted;
    full.connections_connected = t->totals.connected;
    full.handshakes_aborted = t->totals.failed;
    std::memcpy(out, &full, std::min<size_t>(out->size, sizeof full));
    return 0;
}

// Our files again, then the inner transport's if it has any: a failure of
// either is the answer, and ours is kept whichever fails.
int reload_credentials(tw_transport *t, char *out, size_t len)
{
    if (!out || len == 0) return -EINVAL;
    std::string why;
    int rc = t->credentials.load(t->settings, &why);
    if (rc < 0) {
        set_why(out, len, why);
        return rc;
    }
    std::string done = t->credentials.certificate();
    if (t->inner->version >= 4) {
        std::vector<char> inner_why(len, '\0');
        int irc = t->inner->ctrl(t->inner_t, nullptr, nullptr, TW_CTRL_RELOAD_CREDENTIALS, inner_why.data(), len);
        if (irc < 0 && irc != -EOPNOTSUPP) {
            set_why(out, len, "tls.inner = " + t->settings.inner + ": " + inner_why.data());
            return irc;
        }
        if (irc == 0 && inner_why[0]) done += "; inner: " + std::string(inner_why.data());
    }
    set_why(out, len, done);
    return 0;
}

} // namespace

extern "C" int tls_check_config(const tw_host *host, char *why, size_t why_len)
{
    tls::Settings s;
    return tls::load_settings(host, &s, why, why_len);
}

extern "C" int tls_init(const tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    if (!host || host->size < TW_HOST_SIZE_V1) {
        set_why(why, why_len, "host services table too small for ABI 1.0");
        return -TW_EABI;
    }
    if (!TW_HAS_MEMBER(host, struct tw_host, transport_ops) || !host->transport_ops) {
        set_why(why, why_len,
                "this host (ABI 1." + std::to_string(host->version) +
                    ") cannot hand a plugin another transport: tls needs the transport_ops service of ABI 1.2");
        return -TW_EABI;
    }
    tls::Settings s;
    int rc = tls::load_settings(host, &s, why, why_len);
    if (rc < 0) return rc;
    tw_transport *t = new (std::nothrow) tw_transport{};
    if (!t) return -ENOMEM;
    t->host = host;
    t->settings = s;
    // Only tcp: a socket under another transport (fault over tcp) is its to use.
    t->kernel_tls = s.ktls && s.inner == "tcp" && tls::kernel_offers_tls();
    std::string reason;
    rc = t->credentials.load(s, &reason);
    if (rc < 0) {
        set_why(why, why_len, reason);
        delete t;
        return rc;
    }
    const tw_transport_ops *inner = nullptr;
    char inner_why[400] = "";
    rc = host->transport_ops(host, s.inner.c_str(), &inner, inner_why, sizeof inner_why);
    if (rc < 0 || !inner) {
        set_why(why, why_len, "tls.inner = " + s.inner + ": " + inner_why);
        delete t;
        return rc < 0 ? rc : -ENOENT;
    }
    t->inner = inner;
    rc = inner->init(host, &t->inner_t, why, why_len);
    if (rc < 0 || !t->inner_t) {
        std::string inner_reason = why ? why : "";
        set_why(why, why_len,
                "tls.inner = " + s.inner + " refused: " + (inner_reason.empty() ? "init failed" : inner_reason));
        delete t;
        return rc < 0 ? rc : -EINVAL;
    }
    host->log(host, TW_LOG_INFO, "TLS over %s: %s, TLS %s, peer verification %s (server) / %s (client)",
              s.inner.c_str(), t->credentials.certificate().c_str(),
              s.min_protocol == s.max_protocol ? (s.min_protocol == TLS1_3_VERSION ? "1.3 only" : "1.2 only")
                                               : "1.2 and later",
              s.verify_text(true), s.verify_text(false));
    *out = t;
    return 0;
}

extern "C" void tls_fini(tw_transport *t)
{
    if (!t) return;
    if (t->inner_t) t->inner->fini(t->inner_t);
    delete t;
}

extern "C" int tls_probe(const tw_host *, char *buf, size_t len)
{
    return snprintf(buf, len, "library: %s\nktls: %s\n", OpenSSL_version(OPENSSL_VERSION),
                    tls::kernel_tls_status(nullptr).c_str());
}

extern "C" int tls_describe(tw_transport *t, char *buf, size_t len)
{
    const tls::Settings &s = t->settings;
    const tls::Totals &n = t->totals;
    std::string text = "inner: " + s.inner + "\nlibrary: " + OpenSSL_version(OPENSSL_VERSION) +
                       "\nktls: " + tls::kernel_tls_status(t) + "\ncertificate: " + t->credentials.certificate() +
                       "\ncredentials: " + t->credentials.reloads() +
                       "\nmin_protocol: " + (s.min_protocol == TLS1_3_VERSION ? "1.3" : "1.2") +
                       "\nmax_protocol: " + (s.max_protocol == TLS1_3_VERSION ? "1.3" : "1.2") +
                       "\nverify: " + s.verify_text(true) + " (server), " + s.verify_text(false) + " (client)" +
                       "\nsession_resumption: " + (s.session_resumption ? "yes" : "no") +
                       "\nhandshakes: accepted=" + std::to_string(n.accepted) +
                       " connected=" + std::to_string(n.connected) + " resumed=" + std::to_string(n.resumed) +
                       " failed=" + std::to_string(n.failed) + " verify_failed=" + std::to_string(n.verify_failed) +
                       " not_tls=" + std::to_string(n.not_tls) + " timed_out=" + std::to_string(n.timed_out) +
                       " refused_busy=" + std::to_string(n.refused_busy) +
                       " in_flight=" + std::to_string(t->handshakes_in_flight.load()) + "\n";
    text += twinwire::stacking::inner_description(t->inner, t->inner_t);
    return snprintf(buf, len, "%s", text.c_str());
}

extern "C" int tls_loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out)
{
    return twinwire::stacking::attach_loop(t, loop, out);
}

extern "C" void tls_loop_detach(tw_transport_loop *tl) { twinwire::stacking::detach_loop(tl, tls::free_conn); }

extern "C" int tls_has_pending(tw_transport_loop *tl)
{
    tl->turn++;
    if (tl->t->inner->has_pending_data(tl->inner) > 0 || !tl->staging.empty()) return 1;
    // Connections with nothing to say leave the list here.
    auto &a = tl->active;
    for (size_t i = 0; i < a.size();) {
        if (tls::own_events(a[i])) return 1;
        a[i]->flags &= ~tls::kInActive;
        a[i] = a.back();
        a.pop_back();
    }
    return 0;
}

extern "C" int tls_process_pending(tw_transport_loop *tl)
{
    int n = 0;
    tls::seal_all_staged(tl); // this turn's small writes, a record per connection
    if (tl->t->inner->has_pending_data(tl->inner) > 0) {
        int rc = tl->t->inner->process_pending_data(tl->inner);
        if (rc > 0) n += rc;
    }
    // A callback may close connections (and so change the list): copy it.
    std::vector<tw_conn *> ready;
    for (tw_conn *c : tl->active)
        if (tls::own_events(c)) ready.push_back(c);
    for (tw_conn *c : ready) {
        if (std::find(tl->active.begin(), tl->active.end(), c) == tl->active.end()) continue; // closed meanwhile
        tls::deliver(c);
        n++;
    }
    return n;
}

extern "C" int tls_ctrl(tw_transport *t, tw_conn *c, const char *ns, uint32_t op, void *data, size_t len)
{
    if (ns && !strcmp(ns, "tls")) {
        if (op == TW_TLS_CTRL_SESSION) return session_info(c, data, len);
        return -EOPNOTSUPP;
    }
    if (!ns && op == TW_CTRL_GET_TRANSPORT_STATS && !c) return transport_stats(t, data, len);
    if (!ns && op == TW_CTRL_RELOAD_CREDENTIALS && !c) return reload_credentials(t, static_cast<char *>(data), len);
    // Everything else is the inner transport's (the fd, Nagle, its own namespace).
    if (c && !c->inner) return -ENOTCONN;
    return t->inner->ctrl(t->inner_t, c ? c->inner : nullptr, ns, op, data, len);
}
