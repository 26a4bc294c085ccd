// SPDX-License-Identifier: MIT
// Outgoing connections: a non-blocking connect(2) with an optional source
// address, finished when the socket turns writable, bounded by a timer.
#include "tcp_internal.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace twinwire::tcp {
namespace {

/// Errors of connect(2) that are the attempt's outcome (reported as
/// TW_EV_ERROR), not a reason it could not start.
bool is_outcome(int err)
{
    switch (err) {
    case ECONNREFUSED:
    case ECONNRESET:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EHOSTDOWN:
    case ENETDOWN:
        return true;
    default:
        return false;
    }
}

int check_params(const tw_connect_params *p)
{
    if (!p || !TW_HAS_MEMBER(p, tw_connect_params, reserved)) return -EINVAL;
    if (!p->addr || p->flags) return -EINVAL;
    uint32_t need = sockaddr_len_for(p->addr);
    if (!need) return -EAFNOSUPPORT;
    if (p->addrlen < need) return -EINVAL;
    if (p->source) {
        if (p->source->sa_family != p->addr->sa_family || p->sourcelen < need) return -EINVAL;
    }
    return 0;
}

bool source_port_is_zero(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) return reinterpret_cast<const sockaddr_in *>(sa)->sin_port == 0;
    if (sa->sa_family == AF_INET6) return reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_port == 0;
    return false;
}

/// Create the socket and bind the source address.  Returns the fd or -errno.
int open_socket(const tw_connect_params *p, const tw_transport *t)
{
    int fd = socket(p->addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    apply_socket_options(t->host, t->settings, fd);
    if (p->source) {
        // Let the kernel pick the port at connect time, so many connections
        // from one source address do not exhaust ephemeral ports early.
        if (source_port_is_zero(p->source)) {
            int one = 1;
            setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        }
        if (bind(fd, p->source, p->sourcelen) < 0) {
            int err = -errno;
            ::close(fd);
            return err;
        }
    }
    return fd;
}

void connect_failed(tw_conn *c, int err, const char *call)
{
    conn_fail(c, err, call);
    conn_drop_socket(c);
    c->state = ConnState::Failed;
    if (c->deadline) c->host->timer_disarm(c->deadline);
}

} // namespace

int conn_connect(tw_transport_loop *tloop, const tw_connect_params *p, tw_conn **out)
{
    if (!tloop || !out) return -EINVAL;
    if (int rc = check_params(p); rc < 0) return rc;
    tw_transport *t = tloop->transport;
    int fd = open_socket(p, t);
    if (fd < 0) return fd;
    tw_conn *c = conn_new(tloop, fd, ConnState::Connecting);
    if (!c) {
        ::close(fd);
        return -ENOMEM;
    }
    char addr[128];
    sockaddr_text(p->addr, addr, sizeof addr);
    snprintf(c->peer_text, sizeof c->peer_text, "peer %s", addr);
    c->connect_timeout_ms = p->timeout_ms ? p->timeout_ms : kDefaultConnectTimeoutMs;

    // An interrupted connect goes on in the background, like EINPROGRESS.
    int rc = ::connect(fd, p->addr, p->addrlen);
    if (rc == 0) {
        t->connected++;
        c->state = ConnState::Announcing;
        c->pending = TW_EV_CONNECTED;
    } else if (errno == EINPROGRESS || errno == EINTR) {
        if (int arm = conn_arm_deadline(c, c->connect_timeout_ms); arm < 0) {
            conn_release(c);
            return arm;
        }
    } else if (is_outcome(errno)) {
        connect_failed(c, -errno, "connect");
    } else {
        int err = -errno;
        conn_release(c);
        return err;
    }
    *out = c;
    return 0;
}

void conn_finish_connect(tw_conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) err = errno;
    if (err == EINPROGRESS || err == EALREADY) return;
    if (err) {
        connect_failed(c, -err, "connect");
        return;
    }
    c->host->timer_disarm(c->deadline);
    c->tloop->transport->connected++;
    c->state = ConnState::Announcing;
    c->pending |= TW_EV_CONNECTED;
}

void conn_connect_timed_out(tw_conn *c)
{
    char call[64];
    snprintf(call, sizeof call, "connect, no answer within %u ms", c->connect_timeout_ms);
    connect_failed(c, -ETIMEDOUT, call);
}

} // namespace twinwire::tcp
