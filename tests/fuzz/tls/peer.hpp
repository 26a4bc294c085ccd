// SPDX-License-Identifier: MIT
// The other end of fuzz-tls's connection: OpenSSL itself, over two memory
// BIOs, with certificates made in memory at start-up (a trusted one the
// plugin's configuration names, and a rogue one it does not know).
#pragma once

#include <openssl/ssl.h>

#include <string>

namespace twfuzz {

/// PEM files written once to a private directory, for the plugin's settings
/// and the peer's contexts.
struct Identities {
    Identities(); ///< makes both in a new directory under /tmp
    /// Once every reader has read them (libFuzzer may end the process
    /// without running destructors).
    void remove_files() const;
    Identities(const Identities &) = delete;
    Identities &operator=(const Identities &) = delete;
    std::string dir;
    std::string cert, key;             ///< CN=localhost, 127.0.0.1; also the CA the plugin trusts
    std::string rogue_cert, rogue_key; ///< the same names from an unknown key
};
const Identities &identities();

class Peer {
public:
    /// server: this end accepts (the plugin connects).  rogue: present the
    /// unknown certificate.  max_version: TLS1_2_VERSION or TLS1_3_VERSION.
    Peer(bool server, bool rogue, int max_version);
    ~Peer();
    Peer(const Peer &) = delete;
    Peer &operator=(const Peer &) = delete;

    /// Ciphertext from the plugin; drives the handshake and reads what the
    /// session carries into `received`.
    void take(const std::string &bytes);
    /// Ciphertext for the plugin, taken off what this end has produced.
    std::string give(size_t max);
    size_t pending() const;
    /// Plaintext to the plugin, once the handshake is done (else nothing).
    bool send(const std::string &plain);
    void key_update();
    void renegotiate();
    void close_notify();

    bool up() const { return !dead_ && SSL_is_init_finished(ssl_); }
    bool dead() const { return dead_; }
    std::string received; ///< plaintext the plugin sent, in order
    std::string sent;     ///< plaintext this end sent, in order

private:
    void drive();
    SSL *ssl_ = nullptr;
    BIO *in_ = nullptr, *out_ = nullptr; // owned by ssl_
    bool dead_ = false;
    bool closed_ = false; ///< close_notify sent: nothing more from this end
};

} // namespace twfuzz
