/* SPDX-License-Identifier: MIT */
/*
 * unixsock: an example twinwire transport in plain C99 that carries the byte
 * stream over AF_UNIX stream sockets on one host.  Addresses stay IPv4 for
 * the host: a listener on 127.0.0.1:7000 is the socket file
 * "<unixsock.dir>/127.0.0.1-7000", and one on 0.0.0.0:7000 answers for any
 * address with that port.
 *
 * Internal header: the plugin's own types, shared by its source files.
 */
#ifndef UNIXSOCK_H
#define UNIXSOCK_H

#include <twinwire/plugin.h>

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#define US_NAME      "unixsock"
#define US_ERROR_LEN 256

struct tw_transport {
    const struct tw_host *host;
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* where the socket files live */
};

struct tw_transport_loop {
    struct tw_transport *transport;
    tw_loop *loop;
    tw_conn *pending_head; /* connections with events no fd announces */
};

struct tw_listener {
    struct tw_transport_loop *tloop;
    int fd;
    tw_watch *watch;
    struct sockaddr_in addr; /* what the host asked for, port filled in */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    tw_incoming_cb on_incoming;
    void *arg;
};

struct tw_conn {
    struct tw_transport_loop *tloop;
    int fd;
    tw_watch *watch; /* NULL until the connection lives on its loop */
    tw_conn_cb cb;   /* NULL until set_callback */
    void *arg;
    uint32_t interest;    /* TW_EV_READ / TW_EV_WRITE the host asked for */
    uint32_t pending;     /* TW_EV_CONNECTED / TW_EV_ERROR not yet delivered */
    int up;               /* TW_EV_CONNECTED delivered: READ/WRITE may follow */
    int error;            /* the connection's error (negative), or 0 */
    int write_shut;       /* shutdown(SHUT_WR) done */
    tw_conn *prev, *next; /* in tloop->pending_head while queued */
    char last_error[US_ERROR_LEN];
};

/* address.c: IPv4 address <-> socket file. */
int us_check_inet(const struct sockaddr *addr, uint32_t addrlen);
int us_path_for(const struct tw_transport *t, const struct sockaddr_in *addr, char *out, size_t len);

/* conn.c */
int us_conn_connect(struct tw_transport_loop *tloop, const struct tw_connect_params *params, tw_conn **out);
int us_conn_adopt(int fd, struct tw_transport_loop *target, tw_conn **out);
int us_set_callback(tw_conn *conn, tw_conn_cb cb, void *arg);
int us_set_events(tw_conn *conn, uint32_t events);
ssize_t us_read(tw_conn *conn, void *buf, size_t len);
ssize_t us_readv(tw_conn *conn, const struct iovec *iov, int iovcnt);
ssize_t us_write(tw_conn *conn, const void *buf, size_t len);
ssize_t us_writev(tw_conn *conn, const struct iovec *iov, int iovcnt);
int us_shutdown(tw_conn *conn, int how);
void us_close(tw_conn *conn);
int us_get_error(tw_conn *conn);
const char *us_last_error(tw_conn *conn);

/* pending.c: events no fd announces (connected, failed). */
void us_pending_add(tw_conn *conn, uint32_t events);
void us_pending_forget(tw_conn *conn);
int us_has_pending_data(struct tw_transport_loop *tloop);
int us_process_pending_data(struct tw_transport_loop *tloop);
void us_update_watch(tw_conn *conn);

/* listener.c */
int us_listen(struct tw_transport_loop *tloop, const struct tw_listen_params *params, tw_listener **out);
int us_accept(tw_listener *listener, struct tw_transport_loop *target, tw_conn **out);
int us_listener_addr(tw_listener *listener, struct sockaddr *addr, uint32_t *addrlen);
void us_listener_close(tw_listener *listener);

#endif
