// SPDX-License-Identifier: MIT
#include "settings.hpp"

#include "report.hpp"
#include "wire.hpp"

#include <twinwire/errors.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>

namespace twrdma {

bool parse_size(const char *text, uint64_t *out)
{
    if (!text || !*text) return false;
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (errno || end == text || *text == '-') return false;
    uint64_t mul = 1;
    if (*end) {
        switch (*end) {
        case 'k':
        case 'K':
            mul = 1ull << 10;
            break;
        case 'm':
        case 'M':
            mul = 1ull << 20;
            break;
        case 'g':
        case 'G':
            mul = 1ull << 30;
            break;
        default:
            return false;
        }
        ++end;
        if (*end == 'i') ++end;
        if (*end == 'b' || *end == 'B') ++end;
        if (*end) return false;
    }
    if (v > UINT64_MAX / mul) return false;
    *out = v * mul;
    return true;
}

size_t Settings::block_size() const
{
    // Not rounded to pages: the pool puts every ring (a power of two of at
    // least a page) first and the local parts after them.
    return ring_size + send_buffer_size + size_t(kCtrlSlots) * kRecvBufSize;
}

size_t Settings::idle_connection_bytes() const { return block_size() + size_t(recv_depth) * kRecvBufSize; }

namespace {

class Reader {
public:
    Reader(const tw_host *host, std::string *why) : host_(host), why_(why) {}

    bool size(const char *key, size_t *out, uint64_t min, uint64_t max, bool pow2)
    {
        const char *v = get(key);
        if (!v) return true;
        uint64_t n = 0;
        if (!parse_size(v, &n)) return bad(key, v, "expected a size such as 4096, 64k, 8M or 1G");
        if (n < min || n > max)
            return bad(key, v, format("must be between %s and %s", human_bytes(min).c_str(), human_bytes(max).c_str()));
        if (pow2 && (n & (n - 1))) return bad(key, v, "must be a power of two");
        *out = static_cast<size_t>(n);
        return true;
    }

    bool integer(const char *key, uint32_t *out, uint32_t min, uint32_t max)
    {
        const char *v = get(key);
        if (!v) return true;
        errno = 0;
        char *end = nullptr;
        long long n = std::strtoll(v, &end, 10);
        if (errno || end == v || *end) return bad(key, v, "expected an integer");
        if (n < min || n > max) return bad(key, v, format("must be between %u and %u", min, max));
        *out = static_cast<uint32_t>(n);
        return true;
    }

    /// A kernel device name as ibv_devices lists it ("rxe0", "mlx5_1");
    /// empty, like unset, means any device.
    bool device_name(const char *key, std::string *out)
    {
        const char *v = get(key);
        if (!v) return true;
        if (std::strlen(v) >= kDeviceNameMax) return bad(key, v, "expected a device name of at most 63 characters");
        for (const char *p = v; *p; ++p)
            if (*p == '/' || *p <= ' ' || *p == 0x7f)
                return bad(key, v,
                           "expected a device name as ibv_devices lists it (no '/', spaces or control "
                           "characters)");
        *out = v;
        return true;
    }

    bool bad(const char *key, const char *value, const std::string &what)
    {
        *why_ = format("%s = %s (%s): %s", key, value, origin_.c_str(), what.c_str());
        return false;
    }

    /// Where a key's value came from, for the rules between keys: its
    /// origin, or "default" when it was not set.
    const char *origin_of(const char *key) const
    {
        auto it = origins_.find(key);
        return it == origins_.end() ? "default" : it->second.c_str();
    }

private:
    static constexpr size_t kDeviceNameMax = 64; // IBV_SYSFS_NAME_MAX, with the NUL

    const char *get(const char *key)
    {
        const char *origin = nullptr;
        const char *v = host_->config_get(host_, key, &origin);
        origin_ = origin ? origin : "unknown origin";
        if (v) origins_[key] = origin_;
        return v;
    }
    const tw_host *host_;
    std::string *why_;
    std::string origin_;
    std::map<std::string, std::string> origins_; ///< of the keys that were set
};

} // namespace

int load_settings(const tw_host *host, Settings *s, std::string *why)
{
    Reader r(host, why);
    uint32_t gid = 0;
    bool gid_set = false;
    bool ok = r.size("rdma.ring_size", &s->ring_size, 4096, 256u << 20, true) &&
              r.size("rdma.ring_max", &s->ring_max, 0, 256u << 20, true) &&
              r.size("rdma.send_buffer_size", &s->send_buffer_size, 1024, 256u << 20, true) &&
              r.size("rdma.send_buffer_max", &s->send_buffer_max, 0, 256u << 20, true) &&
              r.integer("rdma.ring_idle_ms", &s->ring_idle_ms, 10, 86400000) &&
              r.integer("rdma.recv_depth", &s->recv_depth, 8, 4096) &&
              r.integer("rdma.control_credits", &s->control_credits, 2, 2048) &&
              r.integer("rdma.sq_depth", &s->sq_depth, 16, 16384) &&
              r.size("rdma.pool_size", &s->pool_size, 64 * 1024, 1ull << 40, false) &&
              r.size("rdma.pool_max", &s->pool_max, 64 * 1024, 1ull << 40, false) &&
              r.integer("rdma.qp_timeout", &s->qp_timeout, 1, 31) &&
              r.integer("rdma.retry_count", &s->retry_count, 0, 7) &&
              r.integer("rdma.rnr_retry", &s->rnr_retry, 0, 6) &&
              r.integer("rdma.keepalive_ms", &s->keepalive_ms, 10, 3600000) &&
              r.integer("rdma.dead_peer_ms", &s->dead_peer_ms, 20, 86400000) &&
              r.integer("rdma.linger_ms", &s->linger_ms, 0, 600000) &&
              r.integer("rdma.busy_poll_us", &s->busy_poll_us, 0, 1000000) &&
              r.device_name("rdma.device", &s->device) && r.integer("rdma.port", &s->port, 0, 255) &&
              r.size("rdma.rma_max_transfer", &s->rma_max_transfer, 4096, 1ull << 31, false);
    if (ok) {
        const char *origin = nullptr;
        const char *v = host->config_get(host, "rdma.gid_index", &origin);
        if (v) {
            gid_set = true;
            ok = r.integer("rdma.gid_index", &gid, 0, 65535);
        }
    }
    if (!ok) return -TW_ECONFIG;
    if (gid_set) s->gid_index = static_cast<int>(gid);
    // Cross-key rules, each named with both keys and where they came from.
    // A maximum of 0 is the start itself (no growth); a start above the
    // default maximum raises it.
    for (auto [start, max, start_key, max_key] :
         {std::make_tuple(&s->ring_size, &s->ring_max, "rdma.ring_size", "rdma.ring_max"),
          std::make_tuple(&s->send_buffer_size, &s->send_buffer_max, "rdma.send_buffer_size",
                          "rdma.send_buffer_max")}) {
        if (*max == 0 || (*start > *max && std::strcmp(r.origin_of(max_key), "default") == 0)) *max = *start;
        if (*start <= *max) continue;
        *why = format("%s = %zu (%s) is smaller than %s = %zu (%s): a ring never shrinks below its start", max_key,
                      *max, r.origin_of(max_key), start_key, *start, r.origin_of(start_key));
        return -TW_ECONFIG;
    }
    if (s->control_credits * 2 > s->recv_depth) {
        *why = format("rdma.control_credits = %u (%s) with rdma.recv_depth = %u (%s): the reserve for control "
                      "messages may be at most half the receive depth",
                      s->control_credits, r.origin_of("rdma.control_credits"), s->recv_depth,
                      r.origin_of("rdma.recv_depth"));
        return -TW_ECONFIG;
    }
    if (s->pool_max < s->pool_size) {
        *why = format("rdma.pool_max = %zu (%s) is smaller than rdma.pool_size = %zu (%s)", s->pool_max,
                      r.origin_of("rdma.pool_max"), s->pool_size, r.origin_of("rdma.pool_size"));
        return -TW_ECONFIG;
    }
    if (s->dead_peer_ms <= s->keepalive_ms) {
        *why = format("rdma.dead_peer_ms = %u (%s) must be larger than rdma.keepalive_ms = %u (%s)", s->dead_peer_ms,
                      r.origin_of("rdma.dead_peer_ms"), s->keepalive_ms, r.origin_of("rdma.keepalive_ms"));
        return -TW_ECONFIG;
    }
    if (s->block_size() > s->pool_max) {
        *why = format("rdma.pool_max = %zu (%s) cannot hold one connection (%zu bytes: rdma.ring_size + "
                      "rdma.send_buffer_size + receive buffers)",
                      s->pool_max, r.origin_of("rdma.pool_max"), s->block_size());
        return -TW_ECONFIG;
    }
    return 0;
}

} // namespace twrdma
