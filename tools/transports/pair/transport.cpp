// SPDX-License-Identifier: MIT
// The transport object, its loops, its counters and ctrl.
#include "pair.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

using namespace twpair;

int pair_check_config(const tw_host *host, char *why, size_t why_len)
{
    Settings s;
    return read_settings(host, &s, why, why_len);
}

int pair_init(const tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    // Growth rules (abi.h): any host table from the ABI 1.0 size up.
    if (host->size < TW_HOST_SIZE_V1) {
        snprintf(why, why_len, "the host's table is %u bytes, smaller than the %u of ABI 1.0",
                 static_cast<unsigned>(host->size), static_cast<unsigned>(TW_HOST_SIZE_V1));
        return -TW_EABI;
    }
    Settings s;
    if (int rc = read_settings(host, &s, why, why_len); rc < 0) return rc;
    auto *t = new (std::nothrow) tw_transport;
    if (!t) return -ENOMEM;
    t->host = host;
    t->settings = s;
    *out = t;
    return 0;
}

void pair_fini(tw_transport *t) { delete t; }

int pair_describe(tw_transport *t, char *buf, size_t len)
{
    return snprintf(buf, len, "buffer_size: %zu\nnamespace: this process\nconnections_open: %llu\n",
                    t->settings.buffer_size, static_cast<unsigned long long>(t->open.load()));
}

int pair_loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out)
{
    auto *tl = new (std::nothrow) tw_transport_loop;
    if (!tl) return -ENOMEM;
    tl->transport = t;
    tl->loop = loop;
    tl->id = registry_add_loop(tl);
    *out = tl;
    return 0;
}

void pair_loop_detach(tw_transport_loop *tl)
{
    // A wake-up task still posted finds the id gone and does nothing.
    registry_remove_loop(tl);
    delete tl;
}

namespace {

int transport_stats(tw_transport *t, void *data, size_t len)
{
    auto *out = static_cast<tw_transport_stats *>(data);
    if (!out || len < 8 || out->size < 8) return -EINVAL;
    tw_transport_stats s{};
    s.size = out->size;
    s.version = TW_TRANSPORT_STATS_VERSION;
    s.connections_open = t->open.load();
    s.connections_accepted = t->accepted.load();
    s.connections_connected = t->connected.load();
    s.handshakes_aborted = t->aborted.load();
    size_t n = out->size < sizeof s ? out->size : sizeof s;
    if (n > len) n = len;
    memcpy(out, &s, n);
    return 0;
}

} // namespace

int pair_ctrl(tw_transport *t, tw_conn *c, const char *ns, uint32_t op, void *data, size_t len)
{
    if (ns) return -EOPNOTSUPP; // pair has no private ops
    if (!t && c) t = c->transport;
    switch (op) {
    case TW_CTRL_GET_FD:
        return -ENOTSUP; // no file descriptor behind a pair connection
    case TW_CTRL_SET_NODELAY:
        // Nothing is ever held back: every write is the peer's data at once.
        return data && len >= sizeof(int) ? 0 : -EINVAL;
    case TW_CTRL_GET_TRANSPORT_STATS:
        return t ? transport_stats(t, data, len) : -EINVAL;
    default:
        return -EOPNOTSUPP;
    }
}
