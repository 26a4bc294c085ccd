// SPDX-License-Identifier: MIT
// Passive endpoints: bind + listen on the listener's loop, accept4 on its
// thread, and hand the new connection to the target loop untouched (the fd
// watch is registered there, in set_callback).
//
// Out of file descriptors (EMFILE, ENFILE) the waiting clients cannot be
// accepted, and the level-triggered listening socket would report them again
// at once, forever: instead the listener closes them (accepting each on a
// spare fd kept for this), so they see a close rather than hang, and stops
// watching the socket for a backoff (10 ms doubling to 1 s) before it tries
// again.  Accepting resumes by itself once descriptors are free.
#include "tcp_internal.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <new>

namespace twinwire::tcp {
namespace {

int check_params(const tw_listen_params *p)
{
    if (!p || !TW_HAS_MEMBER(p, tw_listen_params, arg)) return -EINVAL;
    if (!p->addr || !p->on_incoming || (p->flags & ~uint32_t(TW_LISTEN_V6ONLY))) return -EINVAL;
    uint32_t need = sockaddr_len_for(p->addr);
    if (!need) return -EAFNOSUPPORT;
    return p->addrlen < need ? -EINVAL : 0;
}

/// Create, configure, bind and listen.  Returns the fd, or -errno and the
/// step that failed in *step.
int open_listen_socket(const tw_listen_params *p, const char **step)
{
    *step = "socket";
    int fd = socket(p->addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int one = 1;
    int v6only = (p->flags & TW_LISTEN_V6ONLY) ? 1 : 0;
    const char *failed = nullptr;
    int stale = p->addr->sa_family == AF_UNIX ? unix_path_prepare(p->addr, p->addrlen) : 0;
    if (stale < 0) {
        errno = -stale;
        failed = "bind";
    } else if (p->addr->sa_family != AF_UNIX && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        failed = "setsockopt(SO_REUSEADDR)";
    // Explicit, so the system default (net.ipv6.bindv6only) does not decide.
    else if (p->addr->sa_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only) < 0)
        failed = "setsockopt(IPV6_V6ONLY)";
    else if (bind(fd, p->addr, p->addrlen) < 0) failed = "bind";
    else if (listen(fd, p->backlog > 0 ? p->backlog : kDefaultBacklog) < 0) failed = "listen";
    if (!failed) return fd;
    *step = failed;
    int err = -errno;
    ::close(fd);
    return err;
}

constexpr uint64_t kFirstBackoffNs = 10'000'000;
constexpr uint64_t kMaxBackoffNs = 1'000'000'000;
// Waiting clients closed per exhaustion event (the rest wait for the next).
constexpr int kMaxShedPerEvent = 256;

int open_reserve_fd() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

bool out_of_descriptors(int err) { return err == EMFILE || err == ENFILE; }

/// Close the clients waiting in the backlog: give back the spare fd, accept
/// one on it, close it, take the spare back.  Returns how many were closed.
int shed_waiting_clients(tw_listener *l)
{
    int shed = 0;
    while (shed < kMaxShedPerEvent && l->reserve_fd >= 0) {
        ::close(l->reserve_fd);
        int fd = accept4(l->fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
            ::close(fd);
            ++shed;
        }
        l->reserve_fd = open_reserve_fd();
        if (fd < 0 && errno != EINTR && errno != ECONNABORTED) break; // EAGAIN: none left
    }
    return shed;
}

void on_resume(tw_timer *, void *arg)
{
    auto *l = static_cast<tw_listener *>(arg);
    l->tloop->transport->host->watch_set(l->watch, TW_WATCH_READ);
}

/// Stop watching the listening socket for a while (doubling each time).
void pause_accepting(tw_listener *l)
{
    const tw_host *host = l->tloop->transport->host;
    l->backoff_ns = l->backoff_ns ? std::min(l->backoff_ns * 2, kMaxBackoffNs) : kFirstBackoffNs;
    if (!l->resume || host->timer_arm(l->resume, l->backoff_ns, 0) < 0) return; // keep watching: no timer
    host->watch_set(l->watch, 0);
}

void on_listener_ready(tw_watch *, int, uint32_t, void *arg)
{
    auto *l = static_cast<tw_listener *>(arg);
    // The host may close the listener in here: nothing touches it after.
    l->on_incoming(l, l->arg);
}

/// Watch a bound, listening socket `fd` (owned from here on).  With
/// `bound_here`, the socket file of a Unix path is removed at close.
int start_listener(tw_transport_loop *tloop, int fd, const tw_listen_params *p, bool bound_here, tw_listener **out)
{
    const tw_host *host = tloop->transport->host;
    auto *l = new (std::nothrow) tw_listener;
    if (!l) {
        ::close(fd);
        return -ENOMEM;
    }
    l->tloop = tloop;
    l->fd = fd;
    if (bound_here) unix_path_remember(l, p->addr, p->addrlen);
    l->on_incoming = p->on_incoming;
    l->arg = p->arg;
    l->reserve_fd = open_reserve_fd(); // without it, waiting clients wait for the backoff instead
    int rc = host->timer_add(tloop->loop, on_resume, l, &l->resume);
    if (rc == 0) rc = host->watch_add(tloop->loop, fd, TW_WATCH_READ, on_listener_ready, l, &l->watch);
    if (rc < 0) {
        if (l->resume) host->timer_del(l->resume);
        if (l->reserve_fd >= 0) ::close(l->reserve_fd);
        unix_path_remove(l);
        ::close(fd);
        delete l;
        return rc;
    }
    *out = l;
    return 0;
}

} // namespace

int listener_open(tw_transport_loop *tloop, const tw_listen_params *p, tw_listener **out)
{
    if (!tloop || !out) return -EINVAL;
    if (int rc = check_params(p); rc < 0) return rc;
    const tw_host *host = tloop->transport->host;
    const char *step = "";
    int fd = open_listen_socket(p, &step);
    if (fd < 0) {
        char addr[128], text[320];
        sockaddr_text(p->addr, addr, sizeof addr);
        format_error(text, sizeof text, step, addr, fd);
        host->log(host, TW_LOG_DEBUG, "tcp: %s", text);
        return fd;
    }
    return start_listener(tloop, fd, p, true, out);
}

int listener_accept(tw_listener *l, tw_transport_loop *target, tw_conn **out)
{
    if (!target || !out) return -EINVAL;
    int fd;
    for (;;) {
        fd = accept4(l->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) break;
        // A peer that gave up before we got to it: try the next one.
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return -EAGAIN;
        int err = errno;
        if (out_of_descriptors(err)) {
            int shed = shed_waiting_clients(l);
            pause_accepting(l);
            l->tloop->transport->host->log(l->tloop->transport->host, TW_LOG_DEBUG,
                                           "tcp: accept: out of file descriptors; closed %d waiting client(s), "
                                           "accepting again in %llu ms",
                                           shed, static_cast<unsigned long long>(l->backoff_ns / 1000000));
        }
        return -err;
    }
    l->backoff_ns = 0;
    tw_transport *t = target->transport;
    apply_socket_options(t->host, t->settings, fd);
    tw_conn *c = conn_new(target, fd, ConnState::Announcing);
    if (!c) {
        ::close(fd);
        return -ENOMEM;
    }
    struct sockaddr_storage peer;
    uint32_t len = sizeof peer;
    char addr[128] = "?";
    if (socket_name(fd, true, reinterpret_cast<sockaddr *>(&peer), &len) == 0)
        sockaddr_text(reinterpret_cast<sockaddr *>(&peer), addr, sizeof addr);
    snprintf(c->peer_text, sizeof c->peer_text, "peer %s", addr);
    // Reported from the target loop once the host has set the callback.
    c->pending = TW_EV_CONNECTED;
    c->incoming = true;
    t->accepted++;
    *out = c;
    return 0;
}

int listener_adopt(tw_transport_loop *tloop, int fd, const tw_listen_params *p, tw_listener **out)
{
    // The fd is ours from here on, whatever happens.
    int type = 0, listening = 0;
    socklen_t len = sizeof type, len2 = sizeof listening;
    int err = 0;
    if (!tloop || !out || fd < 0 || !p || !TW_HAS_MEMBER(p, tw_listen_params, arg) || !p->on_incoming) err = -EINVAL;
    else if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
             getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len2) < 0)
        err = -errno;
    else if (type != SOCK_STREAM || !listening) err = -EINVAL; // not a listening stream socket
    else if (int flags = fcntl(fd, F_GETFL);
             flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
        err = -errno;
    if (err < 0) {
        if (fd >= 0) ::close(fd);
        return err;
    }
    return start_listener(tloop, fd, p, false, out); // the file belongs to whoever bound it (systemd)
}

int listener_addr(tw_listener *l, struct sockaddr *addr, uint32_t *addrlen)
{
    return socket_name(l->fd, false, addr, addrlen);
}

void listener_close(tw_listener *l)
{
    const tw_host *host = l->tloop->transport->host;
    host->watch_del(l->watch);
    host->timer_del(l->resume);
    if (l->reserve_fd >= 0) ::close(l->reserve_fd);
    unix_path_remove(l);
    ::close(l->fd);
    delete l;
}

} // namespace twinwire::tcp
