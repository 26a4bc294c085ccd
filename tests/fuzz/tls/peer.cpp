// SPDX-License-Identifier: MIT
#include "peer.hpp"

#include "fake_wire.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include <unistd.h>

namespace twfuzz {
namespace {

void add_ext(X509 *cert, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    expect(ext && X509_add_ext(cert, ext, -1), "could not add a certificate extension");
    X509_EXTENSION_free(ext);
}

void write_pem(const std::string &path, bool key, void *object)
{
    FILE *f = fopen(path.c_str(), "w");
    expect(f, "could not write a PEM file");
    int ok = key ? PEM_write_PrivateKey(f, static_cast<EVP_PKEY *>(object), nullptr, nullptr, 0, nullptr, nullptr)
                 : PEM_write_X509(f, static_cast<X509 *>(object));
    expect(ok && fclose(f) == 0, "could not write a PEM file");
}

// A self-signed P-256 certificate for localhost and 127.0.0.1, usable by
// either end: one file is both the certificate and the CA that trusts it.
void make_identity(const std::string &cert_path, const std::string &key_path)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = X509_new();
    expect(key && cert, "could not make a key");
    X509_set_version(cert, X509_VERSION_3);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 30L * 86400);
    X509_set_pubkey(cert, key);
    X509_NAME *name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char *>("localhost"), -1, -1,
                               0);
    X509_set_issuer_name(cert, name);
    add_ext(cert, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(cert, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
    expect(X509_sign(cert, key, EVP_sha256()) > 0, "could not sign a certificate");
    write_pem(cert_path, false, cert);
    write_pem(key_path, true, key);
    X509_free(cert);
    EVP_PKEY_free(key);
}

SSL_CTX *peer_context(bool server, bool rogue)
{
    const Identities &ids = identities();
    SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    expect(ctx, "SSL_CTX_new");
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    // Ask a client for its certificate and take any: the plugin's side is under test.
    SSL_CTX_set_verify(ctx, server ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, [](int, X509_STORE_CTX *) { return 1; });
    expect(SSL_CTX_use_certificate_file(ctx, (rogue ? ids.rogue_cert : ids.cert).c_str(), SSL_FILETYPE_PEM) == 1 &&
               SSL_CTX_use_PrivateKey_file(ctx, (rogue ? ids.rogue_key : ids.key).c_str(), SSL_FILETYPE_PEM) == 1,
           "the peer's certificate");
    return ctx;
}

/// [server][rogue], read from the files once.
SSL_CTX *(&peer_contexts())[2][2]
{
    static SSL_CTX *all[2][2] = {{peer_context(false, false), peer_context(false, true)},
                                 {peer_context(true, false), peer_context(true, true)}};
    return all;
}

} // namespace

void Identities::remove_files() const
{
    peer_contexts(); // their last reader
    for (const std::string *f : {&cert, &key, &rogue_cert, &rogue_key}) unlink(f->c_str());
    rmdir(dir.c_str());
}

Identities::Identities()
{
    char tmpl[] = "/tmp/tw-fuzz-tls.XXXXXX";
    expect(mkdtemp(tmpl), "mkdtemp");
    dir = tmpl;
    cert = dir + "/cert.pem";
    key = dir + "/key.pem";
    rogue_cert = dir + "/rogue.pem";
    rogue_key = dir + "/rogue.key";
    make_identity(cert, key);
    make_identity(rogue_cert, rogue_key);
}

const Identities &identities()
{
    static const Identities ids;
    return ids;
}

Peer::Peer(bool server, bool rogue, int max_version)
{
    ssl_ = SSL_new(peer_contexts()[server][rogue]);
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    expect(ssl_ && in_ && out_, "SSL_new");
    BIO_set_mem_eof_return(in_, -1);
    SSL_set_bio(ssl_, in_, out_);
    SSL_set_max_proto_version(ssl_, max_version);
    if (server) SSL_set_accept_state(ssl_);
    else {
        SSL_set_tlsext_host_name(ssl_, "localhost");
        SSL_set_connect_state(ssl_);
    }
    drive(); // a client's first flight
}

Peer::~Peer() { SSL_free(ssl_); }

void Peer::drive()
{
    if (dead_) return;
    char buf[16384];
    for (int i = 0; i < 64; ++i) {
        ERR_clear_error();
        int r;
        if (!SSL_is_init_finished(ssl_)) {
            r = SSL_do_handshake(ssl_);
            if (r == 1) continue; // done: read what came with the last flight
        } else {
            r = SSL_read(ssl_, buf, sizeof buf);
            if (r > 0) {
                received.append(buf, static_cast<size_t>(r));
                continue;
            }
        }
        int e = SSL_get_error(ssl_, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) dead_ = true; // an alert, a close_notify
        break;
    }
    ERR_clear_error();
}

void Peer::take(const std::string &bytes)
{
    if (!bytes.empty()) BIO_write(in_, bytes.data(), static_cast<int>(bytes.size()));
    drive();
}

std::string Peer::give(size_t max)
{
    std::string out(std::min(max, pending()), '\0');
    if (!out.empty()) BIO_read(out_, out.data(), static_cast<int>(out.size()));
    return out;
}

size_t Peer::pending() const { return BIO_ctrl_pending(out_); }

bool Peer::send(const std::string &plain)
{
    if (!up() || closed_ || plain.empty()) return false;
    ERR_clear_error();
    int r = SSL_write(ssl_, plain.data(), static_cast<int>(plain.size()));
    ERR_clear_error();
    if (r <= 0) return false;
    sent.append(plain, 0, static_cast<size_t>(r));
    return true;
}

void Peer::key_update()
{
    if (!up() || closed_ || SSL_version(ssl_) != TLS1_3_VERSION) return;
    SSL_key_update(ssl_, SSL_KEY_UPDATE_REQUESTED);
    SSL_do_handshake(ssl_); // sends it now, not with the next write
    ERR_clear_error();
}

void Peer::renegotiate()
{
    if (!up() || closed_ || SSL_version(ssl_) != TLS1_2_VERSION) return;
    SSL_renegotiate(ssl_);
    drive(); // the HelloRequest or ClientHello
}

void Peer::close_notify()
{
    if (!up()) return;
    // Nothing is sent after it: OpenSSL 3 was seen writing again once a TLS
    // 1.2 renegotiation started afterwards had cleared its shutdown state.
    closed_ = true;
    ERR_clear_error();
    SSL_shutdown(ssl_);
    ERR_clear_error();
}

} // namespace twfuzz
