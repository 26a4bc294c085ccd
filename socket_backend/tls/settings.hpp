// SPDX-License-Identifier: MIT
// The tls.* keys: parsed and checked, without touching a certificate's
// contents (check_config runs on hosts that will never serve TLS).
#pragma once

#include <twinwire/host.h>

#include <cstdint>
#include <string>

namespace tls {

/// tls.verify: how a peer's certificate is checked.  The server asks for a
/// client certificate only from optional on; the client checks the server's
/// unless it is off.
enum class Verify { Default, Off, Optional, Required };

struct Settings {
    std::string inner = "tcp";
    std::string cert_file, key_file; ///< this end's chain (PEM, leaf first) and its key
    std::string ca_file, ca_dir;     ///< what peers' certificates are checked against
    Verify verify = Verify::Default;
    int min_protocol = 0x0303; ///< TLS1_2_VERSION or TLS1_3_VERSION
    int max_protocol = 0x0304; ///< TLS1_2_VERSION or TLS1_3_VERSION, not below min_protocol
    std::string ciphers;       ///< TLS 1.2 cipher list ("" = OpenSSL's default)
    std::string ciphersuites;  ///< TLS 1.3 suites ("" = OpenSSL's default)
    std::string server_name;   ///< client: SNI and the name the server's certificate must carry
    bool session_resumption = true;
    uint64_t session_cache_size = 20480;
    uint64_t session_timeout_s = 300;
    uint64_t handshake_timeout_ms = 10000;
    uint64_t max_handshakes = 1024; ///< server handshakes in flight at once, over all loops
    /// tls.ktls: over a TCP inner connection, let OpenSSL hand the record
    /// layer to the kernel where it offers the tls ULP (off: always in user space).
    bool ktls = true;

    bool has_ca() const { return !ca_file.empty() || !ca_dir.empty(); }
    /// "off", "optional", "required" (the server's default is off, the client's required).
    const char *verify_text(bool server) const;
};

/// Read and check every tls.* key through `host`.  Returns 0, or
/// -TW_ECONFIG with "key = 'value' (origin): reason" in `why`.
int load_settings(const tw_host *host, Settings *out, char *why, size_t why_len);

} // namespace tls
