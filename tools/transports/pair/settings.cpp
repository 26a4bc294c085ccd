// SPDX-License-Identifier: MIT
// pair.* configuration keys, read by init and by check_config alike.
#include "pair.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace twpair {
namespace {

constexpr size_t kMinBuffer = 4096;
constexpr size_t kMaxBuffer = size_t(1) << 30;

/// "64k", "1M", "4096": bytes, or false.
bool parse_size(const char *text, size_t *out)
{
    if (!text || *text < '0' || *text > '9') return false;
    errno = 0;
    char *end = nullptr;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno) return false;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if (*end || v > (~0ull >> shift)) return false;
    *out = static_cast<size_t>(v << shift);
    return true;
}

} // namespace

int read_settings(const tw_host *host, Settings *out, char *why, size_t why_len)
{
    const char *origin = nullptr;
    const char *value = host->config_get(host, "pair.buffer_size", &origin);
    if (!value) return 0;
    size_t size = 0;
    if (!parse_size(value, &size) || size < kMinBuffer || size > kMaxBuffer) {
        snprintf(why, why_len,
                 "pair.buffer_size = '%s' (%s): want a size from 4k to 1G (bytes, or with k, M, G), "
                 "the receive buffer of each end",
                 value, origin ? origin : "?");
        return -TW_ECONFIG;
    }
    out->buffer_size = size;
    return 0;
}

} // namespace twpair
