// SPDX-License-Identifier: MIT
// The SSL_CTXs: certificates, trust, verification, protocols, ciphers and
// session resumption, as the tls.* keys say.  Built at init and again by each
// reload of the credentials; OpenSSL lets every loop thread share them.
#include "tls.hpp"

#include <twinwire/errors.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <ctime>

namespace tls {
namespace {

int conn_index()
{
    static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return index;
}

tw_conn *conn_of(SSL *ssl) { return static_cast<tw_conn *>(SSL_get_ex_data(ssl, conn_index())); }

// Remembers the first certificate that fails, with its subject, for the
// one log line; under verify = optional the handshake goes on anyway.
int on_verify(int ok, X509_STORE_CTX *store)
{
    SSL *ssl = static_cast<SSL *>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
    tw_conn *c = ssl ? conn_of(ssl) : nullptr;
    if (!ok && c && c->verification.error == 0) {
        c->verification.error = X509_STORE_CTX_get_error(store);
        c->verification.depth = X509_STORE_CTX_get_error_depth(store);
        c->verification.subject = subject_of(X509_STORE_CTX_get_current_cert(store));
    }
    if (!ok && c && c->t->settings.verify == Verify::Optional) return 1;
    return ok;
}

// A key with a passphrase must never make OpenSSL prompt on a terminal.
int no_passphrase(char *, int, int, void *) { return -1; }

// TLS 1.3 tickets arrive after the handshake: keep each for the next connect.
int on_new_session(SSL *ssl, SSL_SESSION *session)
{
    tw_conn *c = conn_of(ssl);
    if (!c || c->session_key.empty() || !SSL_SESSION_is_resumable(session)) return 0;
    c->t->sessions.put(c->session_key, session);
    return 1; // we keep the reference
}

std::string key_value(const char *key, const std::string &value) { return std::string(key) + " = '" + value + "'"; }

int bad(std::string *why, const std::string &what)
{
    *why = what + ": " + drain_errors();
    return -TW_ECONFIG;
}

std::string expiry_of(X509 *cert)
{
    const ASN1_TIME *not_after = X509_get0_notAfter(cert);
    BIO *mem = BIO_new(BIO_s_mem());
    std::string out;
    if (mem && ASN1_TIME_print(mem, not_after) == 1) {
        char *p = nullptr;
        long n = BIO_get_mem_data(mem, &p);
        out.assign(p, static_cast<size_t>(n));
    }
    BIO_free(mem);
    return out;
}

EVP_PKEY *read_private_key(const std::string &path)
{
    BIO *file = BIO_new_file(path.c_str(), "r");
    if (!file) return nullptr;
    EVP_PKEY *key = PEM_read_bio_PrivateKey(file, nullptr, no_passphrase, nullptr);
    BIO_free(file);
    return key;
}

int common_setup(SSL_CTX *ctx, const Settings &s, std::string *why)
{
    SSL_CTX_set_min_proto_version(ctx, s.min_protocol);
    SSL_CTX_set_max_proto_version(ctx, s.max_protocol);
    // Renegotiation would make a write wait for a read; nobody needs it.
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
    if (!s.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, s.ciphers.c_str()) != 1)
        return bad(why, key_value("tls.ciphers", s.ciphers));
    if (!s.ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, s.ciphersuites.c_str()) != 1)
        return bad(why, key_value("tls.ciphersuites", s.ciphersuites));
    if (!s.cert_file.empty()) {
        if (SSL_CTX_use_certificate_chain_file(ctx, s.cert_file.c_str()) != 1)
            return bad(why, key_value("tls.cert_file", s.cert_file) + " is not a PEM certificate chain");
        // Read apart from the certificate: "not a key" and "another
        // certificate's key" are different mistakes.
        EVP_PKEY *key = read_private_key(s.key_file);
        if (!key)
            return bad(why, key_value("tls.key_file", s.key_file) +
                                " is not an unencrypted PEM private key (a key with a passphrase cannot be used)");
        bool matches = SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
        EVP_PKEY_free(key);
        if (!matches) return bad(why, key_value("tls.key_file", s.key_file) + " does not belong to tls.cert_file");
    }
    if (s.has_ca()) {
        if (SSL_CTX_load_verify_locations(ctx, s.ca_file.empty() ? nullptr : s.ca_file.c_str(),
                                          s.ca_dir.empty() ? nullptr : s.ca_dir.c_str()) != 1)
            return bad(why, s.ca_file.empty() ? key_value("tls.ca_dir", s.ca_dir)
                                              : key_value("tls.ca_file", s.ca_file) + " holds no PEM certificate");
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        ERR_clear_error(); // no system store: only an explicit CA can verify
    }
    return 0;
}

int make_server(const Settings &s, Contexts *out, std::string *why)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        *why = "OpenSSL cannot make a context: " + drain_errors();
        return -ENOMEM;
    }
    out->server = ctx;
    if (int rc = common_setup(ctx, s, why); rc < 0) return rc;
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    int mode = SSL_VERIFY_NONE;
    if (s.verify == Verify::Optional) mode = SSL_VERIFY_PEER;
    if (s.verify == Verify::Required) mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(ctx, mode, on_verify);
    if (mode != SSL_VERIFY_NONE && !s.ca_file.empty()) {
        // Tell clients which CAs we accept (what `openssl s_client` prints).
        if (STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(s.ca_file.c_str()))
            SSL_CTX_set_client_CA_list(ctx, names);
        ERR_clear_error();
    }
    static const unsigned char id_context[] = "twinwire-tls";
    SSL_CTX_set_session_id_context(ctx, id_context, sizeof id_context - 1);
    if (s.session_resumption && s.session_cache_size > 0) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(ctx, static_cast<long>(s.session_cache_size));
        SSL_CTX_set_timeout(ctx, static_cast<long>(s.session_timeout_s));
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
    if (!s.session_resumption) {
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
        SSL_CTX_set_num_tickets(ctx, 0);
    }
    if (X509 *cert = SSL_CTX_get0_certificate(ctx))
        out->certificate = subject_of(cert) + ", expires " + expiry_of(cert);
    return 0;
}

int make_client(const Settings &s, Contexts *out, std::string *why)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        *why = "OpenSSL cannot make a context: " + drain_errors();
        return -ENOMEM;
    }
    out->client = ctx;
    if (int rc = common_setup(ctx, s, why); rc < 0) return rc;
    SSL_CTX_set_verify(ctx, s.verify == Verify::Off ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, on_verify);
    if (s.session_resumption) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(ctx, on_new_session);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    }
    return 0;
}

} // namespace

SessionStore::~SessionStore()
{
    for (auto &entry : sessions_) SSL_SESSION_free(entry.second);
}

void SessionStore::put(const std::string &peer, SSL_SESSION *session)
{
    constexpr size_t kMaxPeers = 4096; // a client of many servers forgets, never grows without bound
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sessions_.find(peer);
    if (it != sessions_.end()) {
        SSL_SESSION_free(it->second);
        it->second = session;
        return;
    }
    if (sessions_.size() >= kMaxPeers) {
        SSL_SESSION_free(sessions_.begin()->second);
        sessions_.erase(sessions_.begin());
    }
    sessions_.emplace(peer, session);
}

SSL_SESSION *SessionStore::get(const std::string &peer)
{
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sessions_.find(peer);
    if (it == sessions_.end()) return nullptr;
    SSL_SESSION_up_ref(it->second);
    return it->second;
}

Credentials::~Credentials() { free(current_); }

void Credentials::free(Contexts &ctx)
{
    SSL_CTX_free(ctx.server);
    SSL_CTX_free(ctx.client);
    ctx = Contexts{};
}

int Credentials::load(const Settings &s, std::string *why)
{
    ERR_clear_error();
    Contexts fresh;
    int rc = s.cert_file.empty() ? 0 : make_server(s, &fresh, why);
    if (rc == 0) rc = make_client(s, &fresh, why);
    if (rc < 0) {
        free(fresh);
        std::lock_guard<std::mutex> lock(mutex_);
        failed_++;
        last_failure_ = *why;
        return rc;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    // SSL_new took its own reference: sessions of the old contexts live on.
    std::swap(current_, fresh);
    loads_++;
    free(fresh);
    return 0;
}

SSL *Credentials::new_ssl(bool server)
{
    std::lock_guard<std::mutex> lock(mutex_);
    SSL_CTX *ctx = server ? current_.server : current_.client;
    return ctx ? SSL_new(ctx) : nullptr;
}

bool Credentials::can_serve() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return current_.server != nullptr;
}

std::string Credentials::certificate() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return current_.server ? current_.certificate : "none (client only)";
}

std::string Credentials::reloads() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out = "reloads=" + std::to_string(loads_ ? loads_ - 1 : 0) + " failed=" + std::to_string(failed_);
    if (!last_failure_.empty()) out += " (last: " + last_failure_ + ")";
    return out;
}

void attach_conn(SSL *ssl, tw_conn *c) { SSL_set_ex_data(ssl, conn_index(), c); }

std::string drain_errors()
{
    std::string out;
    while (unsigned long e = ERR_get_error()) {
        const char *reason = ERR_reason_error_string(e);
        std::string text = reason ? reason : "error " + std::to_string(ERR_GET_REASON(e));
        if (out.find(text) == std::string::npos) out += (out.empty() ? "" : "; ") + text;
    }
    return out.empty() ? "no reason from OpenSSL" : out;
}

std::string subject_of(X509 *cert)
{
    if (!cert) return "";
    char buf[512];
    BIO *mem = BIO_new(BIO_s_mem());
    if (!mem) return "";
    X509_NAME_print_ex(mem, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
    int n = BIO_read(mem, buf, sizeof buf - 1);
    BIO_free(mem);
    return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

} // namespace tls
