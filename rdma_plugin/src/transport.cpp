// SPDX-License-Identifier: MIT
// Process lifecycle: init (config, devices, memlock), fini, probe, describe.
#include "transport.hpp"

#include "process_guard.hpp"
#include "rdma_core.hpp"
#include "report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace twrdma {

namespace {

void put_why(char *why, size_t why_len, const std::string &text)
{
    if (why && why_len) std::snprintf(why, why_len, "%s", text.c_str());
}

int copy_out(const std::string &text, char *buf, size_t len)
{
    if (buf && len) std::snprintf(buf, len, "%s", text.c_str());
    return static_cast<int>(text.size());
}

/// Busy polling on a machine with one CPU spins on the CPU that the work it
/// waits for needs (the peer, SoftRoCE's kernel work): 1.7-6x slower round
/// trips on one vCPU (docs/benchmarks.md, "Two vCPUs: the host's idle wake-up,
/// and busy polling").  A process pinned to one CPU of several is the case
/// busy polling is for: no warning.
std::string busy_poll_warning(const Settings &cfg, long online_cpus)
{
    if (!cfg.busy_poll_us || online_cpus != 1) return {};
    return format("rdma.busy_poll_us is %u on a machine with one CPU: the spinning loop takes that CPU from the work "
                  "it waits for (the peer, SoftRoCE's kernel work) and slows every round trip; set "
                  "rdma.busy_poll_us = 0 here (docs/rdma-design.md, section 3)",
                  cfg.busy_poll_us);
}

} // namespace

int transport_init(const tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    if (!host || !out) return -EINVAL;
    // Any host of ABI 1 will do: members past the 1.0 table are used only when present.
    if (host->size < TW_HOST_SIZE_V1) {
        put_why(why, why_len,
                format("host services table of %u bytes is smaller than the %zu bytes of ABI 1.0", host->size,
                       TW_HOST_SIZE_V1));
        return -TW_EABI;
    }
    fork_guard_arm();
    auto t = std::make_unique<tw_transport>();
    t->host = host;
    std::string reason;
    // Settings first: a bad value is a configuration error on every host,
    // not hidden behind a missing library or device.
    int rc = load_settings(host, &t->cfg, &reason);
    if (rc) {
        put_why(why, why_len, reason);
        return rc;
    }
    rc = load_rdma_core(&reason);
    if (rc) {
        put_why(why, why_len, reason);
        return rc;
    }
    // Memory first: it needs no device, and its message is the most useful.
    constexpr size_t kQueues = 1u << 20; // QPs, CQs and the control slots beside the pool
    // A limit below the configured pool (Debian's default of 8 MiB is) gets
    // a smaller pool, not a refusal: RDMA works, for fewer connections.
    std::string fitted;
    if (fit_pool_to_memlock(t->cfg.idle_connection_bytes(), kQueues, &t->cfg.pool_size, &t->cfg.pool_max, &fitted))
        logf(t.get(), TW_LOG_WARN, "%s", fitted.c_str());
    std::string memlock_warning;
    rc = check_memlock(t->cfg.pool_size + kQueues, t->cfg.pool_max + kQueues, &reason, &memlock_warning);
    if (rc) {
        put_why(why, why_len, reason);
        return rc;
    }
    if (!memlock_warning.empty()) logf(t.get(), TW_LOG_WARN, "%s", memlock_warning.c_str());
    std::string busy_warning = busy_poll_warning(t->cfg, sysconf(_SC_NPROCESSORS_ONLN));
    if (!busy_warning.empty()) logf(t.get(), TW_LOG_WARN, "%s", busy_warning.c_str());
    rc = t->devices.open(t->cfg, &reason);
    if (rc) {
        put_why(why, why_len, reason);
        return rc;
    }
    logf(t.get(), TW_LOG_INFO,
         "RDMA transport ready: ring %s (grows to %s), send buffer %s (grows to %s), %u receives per connection in "
         "a shared queue (%u for control), pool %s per loop and device (max %s)",
         human_bytes(t->cfg.ring_size).c_str(), human_bytes(t->cfg.ring_max).c_str(),
         human_bytes(t->cfg.send_buffer_size).c_str(), human_bytes(t->cfg.send_buffer_max).c_str(), t->cfg.recv_depth,
         t->cfg.control_credits, human_bytes(t->cfg.pool_size).c_str(), human_bytes(t->cfg.pool_max).c_str());
    *out = t.release();
    return 0;
}

void transport_fini(tw_transport *t) { delete t; }

int transport_check_config(const tw_host *host, char *why, size_t why_len)
{
    if (!host || !TW_HAS_MEMBER(host, tw_host, config_get) || !host->config_get) return -EINVAL;
    Settings unused;
    std::string reason;
    int rc = load_settings(host, &unused, &reason);
    if (rc) put_why(why, why_len, reason);
    return rc;
}

int transport_probe(const tw_host *, char *buf, size_t len)
{
    std::string why;
    if (load_rdma_core(&why) != 0) return copy_out(format("devices: 0\nerror: %s\n", why.c_str()), buf, len);
    return copy_out(probe_devices(), buf, len);
}

/// What the locked-memory limit allows: idle connections within
/// rdma.pool_max (those of the first slab registered at start), and
/// connections streaming beside the first slab with their rings grown as
/// far as the rest of rdma.pool_max lets them.
static std::string memlock_text(const Settings &s)
{
    const size_t limit = memlock_limit();
    const size_t idle = s.idle_connection_bytes();
    const size_t full_ring = std::max({s.ring_max, s.ring_size, s.send_buffer_max, s.send_buffer_size});
    const size_t ring_room = s.pool_max > s.pool_size ? s.pool_max - s.pool_size : 0;
    // Both rings of a streaming connection grow: the largest size two fit.
    size_t grown = full_ring;
    while (grown > 4096 && grown * 2 > ring_room) grown /= 2;
    const size_t streaming = grown * 2 <= ring_room ? ring_room / (grown * 2) : 0;
    std::string lim = limit == SIZE_MAX ? std::string("unlimited (or CAP_IPC_LOCK)")
                                        : format("%llu KiB", static_cast<unsigned long long>(limit / 1024));
    std::string each = idle % 1024 ? format("%.1f KiB", double(idle) / 1024) : human_bytes(idle);
    return format("memlock: %s; per event-loop thread and device: %zu idle connections (%s each, %zu registered at "
                  "start) within rdma.pool_max (%s), or %zu idle beside %zu streaming with rings grown to %s\n",
                  lim.c_str(), s.pool_max / idle, each.c_str(), s.pool_size / idle, human_bytes(s.pool_max).c_str(),
                  s.pool_size / idle, streaming, human_bytes(grown).c_str());
}

int transport_describe(tw_transport *t, char *buf, size_t len)
{
    const Settings &s = t->cfg;
    std::string out = t->devices.describe() + t->reaper.describe();
    out += format("ring_size: %zu\nsend_buffer_size: %zu\nrecv_depth: %u\ncontrol_credits: %u\nsq_depth: %u\n"
                  "pool_size: %zu\npool_max: %zu\nbytes_per_connection: %zu\nbytes_per_idle_connection: %zu\n"
                  "qp_timeout: %u\nretry_count: %u\n"
                  "rnr_retry: %u\nkeepalive_ms: %u\ndead_peer_ms: %u\nbusy_poll_us: %u\n",
                  s.ring_size, s.send_buffer_size, s.recv_depth, s.control_credits, s.sq_depth, s.pool_size, s.pool_max,
                  s.block_size(), s.idle_connection_bytes(), s.qp_timeout, s.retry_count, s.rnr_retry, s.keepalive_ms,
                  s.dead_peer_ms, s.busy_poll_us);
    tw_transport_stats st{};
    st.size = sizeof st;
    t->counters.fill(&st);
    out += memlock_text(s);
    out += format("address changes (rdma_cm ADDR_CHANGE): listeners set up again %llu, connections failed %llu\n",
                  static_cast<unsigned long long>(t->counters.addr_change_listeners.load()),
                  static_cast<unsigned long long>(t->counters.addr_change_connections.load()));
    out += format("registered_bytes: %llu\nregistered_in_use: %llu\n",
                  static_cast<unsigned long long>(st.registered_bytes),
                  static_cast<unsigned long long>(st.registered_in_use));
    return copy_out(out, buf, len);
}

} // namespace twrdma
