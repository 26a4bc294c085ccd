// SPDX-License-Identifier: MIT
// The TCP backend's process and loop lifecycle, stats and ctrl (the vtable
// itself is in tcp_ops.c).
#include "tcp_internal.hpp"

#include <tw_socket_backend.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>

namespace twinwire::tcp {
namespace {

bool ipv6_available()
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    close(fd);
    return true;
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

} // namespace

int tcp_init(const tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    if (!host || !out) return -EINVAL;
    // Any host of ABI 1 will do: members past the 1.0 table are used only when present.
    if (host->size < TW_HOST_SIZE_V1) {
        snprintf(why, why_len, "host services table is %u bytes; the TCP backend needs at least the %zu of ABI 1.0",
                 host->size, TW_HOST_SIZE_V1);
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

namespace {

int tcp_private_ctrl(uint32_t op, void *data, size_t len)
{
    if (op != TW_TCP_CTRL_ADOPT_LISTENER) return -EOPNOTSUPP;
    auto *a = static_cast<tw_tcp_adopt_listener *>(data);
    if (!a || len < sizeof *a || a->size < sizeof *a) return -EINVAL;
    return listener_adopt(a->tloop, a->fd, a->params, &a->listener);
}

} // namespace

int tcp_ctrl(tw_transport *t, tw_conn *c, const char *ns, uint32_t op, void *data, size_t len)
{
    if (ns) return strcmp(ns, "tcp") == 0 ? tcp_private_ctrl(op, data, len) : -EOPNOTSUPP;
    size_t need = 0;
    switch (op) {
    case TW_CTRL_GET_FD:
    case TW_CTRL_SET_NODELAY:
        need = sizeof(int);
        break;
    case TW_CTRL_GET_TRANSPORT_STATS:
        need = offsetof(tw_transport_stats, connections_open);
        break;
    default:
        return -EOPNOTSUPP;
    }
    if (!data || len < need) return -EINVAL;
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
    default: {
        // The stats fill what fits in both the caller's size and `len`.
        auto *st = static_cast<tw_transport_stats *>(data);
        if (st->size > len) return -EINVAL;
        return transport_stats(c ? c->tloop->transport : t, st);
    }
    }
}

int set_nodelay(int fd, bool on)
{
    int v = on ? 1 : 0;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v) < 0 ? -errno : 0;
}

void apply_socket_options(const tw_host *host, const Settings &s, int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len) < 0 ||
        (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
        return;
    const char *failed = nullptr;
    if (s.nodelay && set_nodelay(fd, true) < 0) failed = "setsockopt(TCP_NODELAY)";
    if (s.keepalive) {
        int on = 1, idle = static_cast<int>(s.keepalive_idle_s), intvl = static_cast<int>(s.keepalive_interval_s),
            cnt = static_cast<int>(s.keepalive_count);
        if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) < 0) failed = "setsockopt(SO_KEEPALIVE)";
        else if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle) < 0) failed = "setsockopt(TCP_KEEPIDLE)";
        else if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl) < 0)
            failed = "setsockopt(TCP_KEEPINTVL)";
        else if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt) < 0) failed = "setsockopt(TCP_KEEPCNT)";
    }
    if (failed) log_line(host, TW_LOG_DEBUG, "tcp: %s: %s (errno %d)", failed, strerror(errno), errno);
}

void log_line(const tw_host *host, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (TW_HAS_MEMBER(host, tw_host, vlog) && host->vlog) {
        host->vlog(host, level, fmt, ap);
    } else {
        char line[512];
        vsnprintf(line, sizeof line, fmt, ap);
        host->log(host, level, "%s", line);
    }
    va_end(ap);
}

} // namespace twinwire::tcp
