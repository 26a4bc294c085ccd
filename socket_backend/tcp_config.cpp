// SPDX-License-Identifier: MIT
// The backend's configuration keys.  Every supported key is looked up here,
// so the host can report the others under "tcp." as unknown.
#include "tcp_internal.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace twinwire::tcp {
namespace {

bool parse_bool(const char *text, bool *out)
{
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};
    for (const char *word : yes)
        if (strcasecmp(text, word) == 0) return *out = true, true;
    for (const char *word : no)
        if (strcasecmp(text, word) == 0) return *out = false, true;
    return false;
}

bool parse_u32(const char *text, uint32_t max, uint32_t *out)
{
    if (*text < '0' || *text > '9') return false;
    errno = 0;
    char *end = nullptr;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end || v > max) return false;
    *out = static_cast<uint32_t>(v);
    return true;
}

int bad_value(char *why, size_t why_len, const char *key, const char *value, const char *origin, const char *expected)
{
    snprintf(why, why_len, "%s = '%s' (from %s): expected %s", key, value, origin ? origin : "?", expected);
    return -TW_ECONFIG;
}

} // namespace

int read_settings(const tw_host *host, Settings *out, char *why, size_t why_len)
{
    const char *origin = nullptr;
    if (const char *v = host->config_get(host, "tcp.nodelay", &origin)) {
        if (!parse_bool(v, &out->nodelay))
            return bad_value(why, why_len, "tcp.nodelay", v, origin, "yes/no/true/false/on/off/1/0");
    }
    if (const char *v = host->config_get(host, "tcp.linger_ms", &origin)) {
        if (!parse_u32(v, 3600 * 1000, &out->linger_ms))
            return bad_value(why, why_len, "tcp.linger_ms", v, origin, "milliseconds, 0..3600000");
    }
    if (const char *v = host->config_get(host, "tcp.keepalive", &origin)) {
        if (!parse_bool(v, &out->keepalive))
            return bad_value(why, why_len, "tcp.keepalive", v, origin, "yes/no/true/false/on/off/1/0");
    }
    // Linux bounds: TCP_KEEPIDLE and TCP_KEEPINTVL 1..32767 s, TCP_KEEPCNT 1..127.
    const struct {
        const char *key;
        uint32_t max;
        uint32_t *field;
    } numbers[] = {{"tcp.keepalive_idle_s", 32767, &out->keepalive_idle_s},
                   {"tcp.keepalive_interval_s", 32767, &out->keepalive_interval_s},
                   {"tcp.keepalive_count", 127, &out->keepalive_count}};
    for (const auto &n : numbers) {
        const char *v = host->config_get(host, n.key, &origin);
        if (!v) continue;
        char expected[48];
        snprintf(expected, sizeof expected, "an integer 1..%u", n.max);
        if (!parse_u32(v, n.max, n.field) || *n.field == 0) return bad_value(why, why_len, n.key, v, origin, expected);
    }
    return 0;
}

int tcp_check_config(const tw_host *host, char *why, size_t why_len)
{
    if (!host || !TW_HAS_MEMBER(host, tw_host, config_get) || !host->config_get) return -EINVAL;
    Settings unused;
    return read_settings(host, &unused, why, why_len);
}

} // namespace twinwire::tcp
