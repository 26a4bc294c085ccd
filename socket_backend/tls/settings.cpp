// SPDX-License-Identifier: MIT
#include "settings.hpp"

#include <stacked_loop.hpp>

#include <twinwire/errors.h>

#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace tls {
namespace {

struct Bad : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One key's text and where it came from; value nullptr when unset.
struct Key {
    const char *name;
    const char *value = nullptr;
    const char *origin = nullptr;
    Key(const tw_host *host, const char *n) : name(n) { value = host->config_get(host, name, &origin); }
    [[noreturn]] void bad(const std::string &reason) const
    {
        throw Bad(std::string(name) + " = '" + value + "' (" + (origin ? origin : "unset") + "): " + reason);
    }
};

uint64_t parse_uint(const Key &k, uint64_t min, uint64_t max)
{
    const std::string range = std::to_string(min) + ".." + std::to_string(max);
    if (!*k.value || *k.value < '0' || *k.value > '9') k.bad("expected a whole number, " + range);
    errno = 0;
    char *end = nullptr;
    unsigned long long v = strtoull(k.value, &end, 10);
    if (errno || *end) k.bad("expected a whole number, " + range);
    if (v < min || v > max) k.bad("expected " + range);
    return v;
}

void get_uint(const tw_host *host, const char *name, uint64_t *out, uint64_t min, uint64_t max)
{
    Key k(host, name);
    if (k.value) *out = parse_uint(k, min, max);
}

void get_bool(const tw_host *host, const char *name, bool *out)
{
    Key k(host, name);
    if (!k.value) return;
    static const char *yes[] = {"yes", "on", "true", "1"}, *no[] = {"no", "off", "false", "0"};
    for (const char *y : yes)
        if (!strcmp(k.value, y)) return void(*out = true);
    for (const char *n : no)
        if (!strcmp(k.value, n)) return void(*out = false);
    k.bad("expected yes or no");
}

// A file we can open and read now; the daemon may drop privileges later,
// but a path that is wrong at start-up is wrong.
void get_file(const tw_host *host, const char *name, std::string *out)
{
    Key k(host, name);
    if (!k.value) return;
    if (!*k.value) k.bad("expected a file name");
    int fd = open(k.value, O_RDONLY | O_CLOEXEC);
    if (fd < 0) k.bad(std::string("cannot be read: ") + strerror(errno));
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    close(fd);
    if (!regular) k.bad("not a regular file");
    *out = k.value;
}

void get_dir(const tw_host *host, const char *name, std::string *out)
{
    Key k(host, name);
    if (!k.value) return;
    struct stat st;
    if (!*k.value) k.bad("expected a directory");
    if (stat(k.value, &st) < 0) k.bad(std::string("cannot be read: ") + strerror(errno));
    if (!S_ISDIR(st.st_mode)) k.bad("not a directory");
    if (access(k.value, R_OK | X_OK) < 0) k.bad(std::string("cannot be read: ") + strerror(errno));
    *out = k.value;
}

void get_verify(const tw_host *host, Settings &s)
{
    Key k(host, "tls.verify");
    if (!k.value) return;
    if (!strcmp(k.value, "off")) s.verify = Verify::Off;
    else if (!strcmp(k.value, "optional")) s.verify = Verify::Optional;
    else if (!strcmp(k.value, "required")) s.verify = Verify::Required;
    else k.bad("expected off, optional or required");
}

void get_protocol(const Key &k, int *out)
{
    if (!k.value) return;
    if (!strcmp(k.value, "1.2") || !strcmp(k.value, "TLSv1.2")) *out = TLS1_2_VERSION;
    else if (!strcmp(k.value, "1.3") || !strcmp(k.value, "TLSv1.3")) *out = TLS1_3_VERSION;
    else k.bad("expected 1.2 or 1.3 (older versions are not offered)");
}

void get_protocols(const tw_host *host, Settings &s)
{
    Key min(host, "tls.min_protocol"), max(host, "tls.max_protocol");
    get_protocol(min, &s.min_protocol);
    get_protocol(max, &s.max_protocol);
    if (max.value && s.max_protocol < s.min_protocol)
        max.bad(std::string("below tls.min_protocol = ") + (min.value ? min.value : "1.2"));
}

// OpenSSL is the judge of a cipher list: a scratch context tries it.
void get_ciphers(const tw_host *host, Settings &s)
{
    Key list(host, "tls.ciphers"), suites(host, "tls.ciphersuites");
    if (!list.value && !suites.value) return;
    SSL_CTX *scratch = SSL_CTX_new(TLS_method());
    if (!scratch) throw std::runtime_error("OpenSSL cannot make a context to check the cipher lists");
    bool list_ok = !list.value || (*list.value && SSL_CTX_set_cipher_list(scratch, list.value) == 1);
    bool suites_ok = !suites.value || SSL_CTX_set_ciphersuites(scratch, suites.value) == 1;
    SSL_CTX_free(scratch);
    if (!list_ok) list.bad("no TLS 1.2 cipher OpenSSL knows (see `openssl ciphers -v`)");
    if (!suites_ok) suites.bad("expected TLS 1.3 suites OpenSSL knows, separated by ':' (TLS_AES_128_GCM_SHA256, ...)");
    if (list.value) s.ciphers = list.value;
    if (suites.value) s.ciphersuites = suites.value;
}

bool is_ip_literal(const char *text)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, text, buf) == 1 || inet_pton(AF_INET6, text, buf) == 1;
}

void get_server_name(const tw_host *host, Settings &s)
{
    Key k(host, "tls.server_name");
    if (!k.value) return;
    size_t n = strlen(k.value);
    if (!n || n > 253) k.bad("expected a host name of 1 to 253 characters");
    if (is_ip_literal(k.value))
        k.bad("an IP address is not a server name (leave tls.server_name unset: the address connected to is "
              "checked against the certificate)");
    for (const char *p = k.value; *p; ++p)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '.'))
            k.bad("expected a host name: letters, digits, '-' and '.'");
    s.server_name = k.value;
}

void get_ktls(const tw_host *host, Settings &s)
{
    Key k(host, "tls.ktls");
    if (!k.value) return;
    if (!strcmp(k.value, "auto")) s.ktls = true;
    else if (!strcmp(k.value, "off")) s.ktls = false;
    else k.bad("expected auto (the kernel's tls ULP where it has one) or off");
}

void load(const tw_host *host, Settings &s)
{
    Key inner(host, "tls.inner");
    if (inner.value) {
        if (!*inner.value) inner.bad("expected a transport name (tcp, pair, rdma, ...)");
        if (!strcmp(inner.value, "tls")) inner.bad("expected another transport: tls cannot wrap itself");
        s.inner = inner.value;
    }
    get_file(host, "tls.cert_file", &s.cert_file);
    get_file(host, "tls.key_file", &s.key_file);
    get_file(host, "tls.ca_file", &s.ca_file);
    get_dir(host, "tls.ca_dir", &s.ca_dir);
    get_verify(host, s);
    get_protocols(host, s);
    get_ciphers(host, s);
    get_server_name(host, s);
    get_bool(host, "tls.session_resumption", &s.session_resumption);
    get_uint(host, "tls.session_cache_size", &s.session_cache_size, 0, 1u << 24);
    get_uint(host, "tls.session_timeout_s", &s.session_timeout_s, 1, 7 * 86400);
    get_uint(host, "tls.handshake_timeout_ms", &s.handshake_timeout_ms, 1, 3600000);
    get_uint(host, "tls.max_handshakes", &s.max_handshakes, 1, 1u << 20);
    get_ktls(host, s);
    if (s.cert_file.empty() != s.key_file.empty()) {
        Key given(host, s.cert_file.empty() ? "tls.key_file" : "tls.cert_file");
        given.bad(std::string("needs ") + (s.cert_file.empty() ? "tls.cert_file" : "tls.key_file") +
                  " too: a certificate and its key go together");
    }
}

} // namespace

const char *Settings::verify_text(bool server) const
{
    switch (verify) {
    case Verify::Off:
        return "off";
    case Verify::Optional:
        return "optional";
    case Verify::Required:
        return "required";
    case Verify::Default:
        break;
    }
    return server ? "off" : "required";
}

int load_settings(const tw_host *host, Settings *out, char *why, size_t why_len)
{
    return twinwire::stacking::load_guarded<Bad>(
        "tls",
        [&] {
            Settings s;
            load(host, s);
            *out = s;
        },
        why, why_len);
}

} // namespace tls
