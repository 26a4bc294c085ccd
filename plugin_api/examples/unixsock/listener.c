/* SPDX-License-Identifier: MIT */
/* Listeners: a socket file per address and port. */
#define _POSIX_C_SOURCE 200809L /* -std=c99 hides POSIX without it */

#include "unixsock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define US_DEFAULT_BACKLOG 1024
#define US_FIRST_PORT      49152u
#define US_PORTS           16384u

static void on_incoming(tw_watch *watch, int fd, uint32_t ready, void *arg)
{
    tw_listener *l = arg;
    (void)watch;
    (void)fd;
    (void)ready;
    l->on_incoming(l, l->arg); /* level-triggered: again while one waits */
}

/* A file nobody accepts on is left over from a process that died: remove
 * it.  0 when `path` is free now, -EADDRINUSE when someone listens there. */
static int claim_path(const char *path)
{
    struct sockaddr_un sun;
    int probe, rc;
    if (access(path, F_OK) != 0) return 0;
    probe = socket(AF_UNIX, SOCK_STREAM, 0);
    if (probe < 0) return -errno;
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    strncpy(sun.sun_path, path, sizeof sun.sun_path - 1);
    rc = connect(probe, (struct sockaddr *)&sun, sizeof sun) == 0 ? -EADDRINUSE : -errno;
    close(probe);
    if (rc == -ECONNREFUSED) return unlink(path) == 0 ? 0 : -errno;
    return rc == -ENOENT ? 0 : -EADDRINUSE;
}

static int bind_port(tw_listener *l, int fd, const struct tw_transport *t)
{
    struct sockaddr_un sun;
    int rc;
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    rc = us_path_for(t, &l->addr, sun.sun_path, sizeof sun.sun_path);
    if (rc < 0) return rc;
    if ((rc = claim_path(sun.sun_path)) < 0) return rc;
    if (bind(fd, (struct sockaddr *)&sun, sizeof sun) < 0) return -errno;
    memcpy(l->path, sun.sun_path, sizeof l->path);
    return 0;
}

/* Port 0: the first free port from a start that differs per process. */
static int bind_any_port(tw_listener *l, int fd, const struct tw_transport *t)
{
    unsigned start = (unsigned)getpid() * 131u, i;
    for (i = 0; i < US_PORTS; i++) {
        int rc;
        l->addr.sin_port = htons((uint16_t)(US_FIRST_PORT + (start + i) % US_PORTS));
        rc = bind_port(l, fd, t);
        if (rc != -EADDRINUSE) return rc;
    }
    return -EADDRINUSE;
}

int us_listen(struct tw_transport_loop *tl, const struct tw_listen_params *p, tw_listener **out)
{
    const struct tw_host *host = tl->transport->host;
    tw_listener *l;
    int fd, rc;
    *out = NULL;
    if (!p || p->size < TW_LISTEN_PARAMS_SIZE_V1 || !p->on_incoming) return -EINVAL;
    if ((rc = us_check_inet(p->addr, p->addrlen)) < 0) return rc;
    if (!(l = calloc(1, sizeof *l))) return -ENOMEM;
    l->tloop = tl;
    memcpy(&l->addr, p->addr, sizeof l->addr);
    l->on_incoming = p->on_incoming;
    l->arg = p->arg;
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) rc = -errno;
    else if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) rc = -errno;
    else rc = l->addr.sin_port ? bind_port(l, fd, tl->transport) : bind_any_port(l, fd, tl->transport);
    if (rc == 0 && listen(fd, p->backlog > 0 ? p->backlog : US_DEFAULT_BACKLOG) < 0) rc = -errno;
    if (rc == 0) rc = host->watch_add(tl->loop, fd, TW_WATCH_READ, on_incoming, l, &l->watch);
    if (rc < 0) {
        if (l->path[0]) unlink(l->path);
        if (fd >= 0) close(fd);
        free(l);
        return rc;
    }
    l->fd = fd;
    *out = l;
    return 0;
}

int us_accept(tw_listener *l, struct tw_transport_loop *target, tw_conn **out)
{
    int fd = accept(l->fd, NULL, NULL), rc;
    if (fd < 0) return errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -errno;
    rc = us_conn_adopt(fd, target, out);
    if (rc < 0) close(fd);
    return rc;
}

int us_listener_addr(tw_listener *l, struct sockaddr *addr, uint32_t *addrlen)
{
    if (*addrlen < sizeof l->addr) return -EINVAL;
    memcpy(addr, &l->addr, sizeof l->addr);
    *addrlen = sizeof l->addr;
    return 0;
}

void us_listener_close(tw_listener *l)
{
    l->tloop->transport->host->watch_del(l->watch);
    close(l->fd); /* what still waits in the backlog is refused */
    unlink(l->path);
    free(l);
}
