// SPDX-License-Identifier: MIT
// The TCP backend's vtable: process and loop lifecycle, ctrl, and the entry
// point that the framework links in.
#include "tcp_internal.hpp"

#include <twinwire/transport.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

namespace twinwire::tcp {
namespace {

int tcp_init(const tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    if (!host || !out) return -EINVAL;
    if (host->size < sizeof(tw_host) || host->version < 1) {
        snprintf(why, why_len, "host services table is %u bytes (version %u); the TCP backend needs %zu (version 1)",
                 host->size, host->version, sizeof(tw_host));
        return -TW_EABI;
    }
    Settings settings;
    if (int rc = read_settings(host, &settings, why, why_len); rc < 0) return rc;
    auto *t = new (std::nothrow) tw_transport;
    if (!t) return -ENOMEM;
    t->host = host;
    t->settings = settings;
    *out = t;
    return 0;
}

void tcp_fini(tw_transport *t) { delete t; }

bool ipv6_available()
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    close(fd);
    return true;
}

int tcp_probe(const tw_host *, char *buf, size_t len)
{
    return snprintf(buf, len, "sockets: kernel TCP\nipv6: %s\n", ipv6_available() ? "yes" : "no");
}

int tcp_describe(tw_transport *t, char *buf, size_t len)
{
    return snprintf(buf, len, "nodelay: %s\nlinger_ms: %u\n", t->settings.nodelay ? "yes" : "no",
                    t->settings.linger_ms);
}

int tcp_loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out)
{
    auto *tl = new (std::nothrow) tw_transport_loop;
    if (!tl) return -ENOMEM;
    tl->transport = t;
    tl->loop = loop;
    *out = tl;
    return 0;
}

void tcp_loop_detach(tw_transport_loop *tl)
{
    // Connections still flushing after close give up: the loop is going away.
    while (tw_conn *c = tl->lingering) conn_release(c);
    delete tl;
}

int tcp_get_error(tw_conn *c) { return c->error; }
const char *tcp_last_error(tw_conn *c) { return c->last_error; }
int tcp_local_addr(tw_conn *c, struct sockaddr *a, uint32_t *len) { return socket_name(c->fd, false, a, len); }
int tcp_peer_addr(tw_conn *c, struct sockaddr *a, uint32_t *len) { return socket_name(c->fd, true, a, len); }

int tcp_get_stats(tw_conn *c, tw_conn_stats *out)
{
    if (!out || out->size < offsetof(tw_conn_stats, bytes_sent)) return -EINVAL;
    tw_conn_stats s = c->stats;
    s.size = out->size;
    s.version = TW_CONN_STATS_VERSION;
    memcpy(out, &s, std::min<size_t>(out->size, sizeof s));
    return 0;
}

int transport_stats(tw_transport *t, tw_transport_stats *out)
{
    if (!t || !out || out->size < offsetof(tw_transport_stats, connections_open)) return -EINVAL;
    tw_transport_stats s{};
    s.size = out->size;
    s.version = TW_TRANSPORT_STATS_VERSION;
    s.connections_open = t->open.load();
    s.connections_accepted = t->accepted.load();
    s.connections_connected = t->connected.load();
    s.handshakes_aborted = t->aborted.load();
    memcpy(out, &s, std::min<size_t>(out->size, sizeof s));
    return 0;
}

int tcp_ctrl(tw_transport *t, tw_conn *c, int op, void *data)
{
    switch (op) {
    case TW_CTRL_GET_FD:
    case TW_CTRL_SET_NODELAY:
    case TW_CTRL_GET_TRANSPORT_STATS: break;
    default: return -EOPNOTSUPP;
    }
    if (!data) return -EINVAL;
    switch (op) {
    case TW_CTRL_GET_FD:
        if (!c) return -EINVAL;
        if (c->fd < 0) return -ENOTCONN;
        *static_cast<int *>(data) = c->fd;
        return 0;
    case TW_CTRL_SET_NODELAY:
        if (!c) return -EINVAL;
        if (c->fd < 0) return -ENOTCONN;
        return set_nodelay(c->fd, *static_cast<const int *>(data) != 0);
    default:
        return transport_stats(c ? c->tloop->transport : t, static_cast<tw_transport_stats *>(data));
    }
}

} // namespace

const tw_plugin_info kInfo = {
    sizeof(tw_plugin_info), TW_PLUGIN_INFO_VERSION, TW_ABI_MAJOR, TW_ABI_MINOR, "tcp", "1.0", &kOps,
};

int set_nodelay(int fd, bool on)
{
    int v = on ? 1 : 0;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v) < 0 ? -errno : 0;
}

const tw_transport_ops kOps = {
    sizeof(tw_transport_ops),
    TW_TRANSPORT_OPS_VERSION,
    "tcp",
    "kernel TCP sockets",
    TW_CAP_IPV6 | TW_CAP_HALF_CLOSE,
    tcp_init,
    tcp_fini,
    tcp_probe,
    tcp_describe,
    tcp_loop_attach,
    tcp_loop_detach,
    nullptr, // has_pending_data: every event is announced by an fd or a timer
    nullptr, // process_pending_data
    listener_open,
    listener_accept,
    listener_addr,
    listener_close,
    conn_connect,
    conn_set_callback,
    conn_set_events,
    conn_read,
    conn_readv,
    conn_write,
    conn_writev,
    conn_shutdown,
    conn_close,
    tcp_get_error,
    tcp_last_error,
    tcp_local_addr,
    tcp_peer_addr,
    tcp_get_stats,
    nullptr, // strerror: no codes of its own
    conn_send_buf_get,
    conn_send_buf_submit,
    conn_recv_buf_borrow,
    conn_recv_buf_return,
    tcp_ctrl,
    check_settings,
};

} // namespace twinwire::tcp

extern "C" TW_EXPORT const tw_plugin_info *tw_socket_backend_entry(uint32_t host_abi_major, uint32_t)
{
    return host_abi_major == TW_ABI_MAJOR ? &twinwire::tcp::kInfo : nullptr;
}
