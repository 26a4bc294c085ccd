// SPDX-License-Identifier: MIT
#include "core.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace twrdma {

void logf(const tw_transport *t, int level, const char *fmt, ...)
{
    if (!t || !t->host || !t->host->log_enabled(t->host, level)) return;
    const tw_host *host = t->host;
    va_list ap;
    va_start(ap, fmt);
    if (TW_HAS_MEMBER(host, tw_host, vlog) && host->vlog) {
        host->vlog(host, level, fmt, ap); // ABI 1.1: no copy, no length limit
    } else {
        char line[768];
        std::vsnprintf(line, sizeof line, fmt, ap);
        host->log(host, level, "%s", line);
    }
    va_end(ap);
}

uint64_t now_ns(const tw_transport *t) { return t->host->now_ns(t->host); }

void TransportCounters::fill(tw_transport_stats *out) const
{
    auto clamp = [](int64_t v) { return v < 0 ? 0ull : static_cast<unsigned long long>(v); };
    tw_transport_stats s{};
    s.size = out->size;
    s.version = TW_TRANSPORT_STATS_VERSION;
    s.connections_open = clamp(connections_open.load());
    s.connections_accepted = connections_accepted.load();
    s.connections_connected = connections_connected.load();
    s.handshakes_aborted = handshakes_aborted.load();
    s.registered_bytes = clamp(registered_bytes.load());
    s.registered_in_use = clamp(registered_in_use.load());
    s.pool_exhausted = pool_exhausted.load();
    s.quarantined_bytes = clamp(quarantined_bytes.load());
    size_t n = out->size < sizeof s ? out->size : sizeof s;
    std::memcpy(out, &s, n);
}

const char *state_name(ConnState s)
{
    switch (s) {
    case ConnState::ResolvingAddr:
        return "resolving address";
    case ConnState::ResolvingRoute:
        return "resolving route";
    case ConnState::Connecting:
        return "connecting";
    case ConnState::Queued:
        return "queued";
    case ConnState::Accepting:
        return "accepting";
    case ConnState::Established:
        return "established";
    case ConnState::Finished:
        return "finished";
    }
    return "?";
}

} // namespace twrdma
