/* SPDX-License-Identifier: MIT */
/*
 * The functions pair's vtable points to.  C linkage, so that ops_table.c
 * builds the table with designated initialisers like every in-tree plugin.
 */
#ifndef TW_PAIR_OPS_H
#define TW_PAIR_OPS_H

#include <twinwire/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* transport.cpp */
int pair_init(const struct tw_host *host, tw_transport **out, char *why, size_t why_len);
void pair_fini(tw_transport *t);
int pair_describe(tw_transport *t, char *buf, size_t len);
int pair_check_config(const struct tw_host *host, char *why, size_t why_len);
int pair_loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out);
void pair_loop_detach(tw_transport_loop *tl);
int pair_ctrl(tw_transport *t, tw_conn *c, const char *ns, uint32_t op, void *data, size_t len);

/* wakeups.cpp */
int pair_has_pending_data(tw_transport_loop *tl);
int pair_process_pending_data(tw_transport_loop *tl);

/* listener.cpp */
int pair_listen(tw_transport_loop *tl, const struct tw_listen_params *p, tw_listener **out);
int pair_accept(tw_listener *l, tw_transport_loop *target, tw_conn **out);
int pair_listener_addr(tw_listener *l, struct sockaddr *addr, uint32_t *addrlen);
void pair_listener_close(tw_listener *l);

/* conn.cpp */
int pair_connect(tw_transport_loop *tl, const struct tw_connect_params *p, tw_conn **out);
int pair_set_callback(tw_conn *c, tw_conn_cb cb, void *arg);
int pair_set_events(tw_conn *c, uint32_t events);
int pair_shutdown(tw_conn *c, int how);
void pair_close(tw_conn *c);
int pair_get_error(tw_conn *c);
const char *pair_last_error(tw_conn *c);
int pair_local_addr(tw_conn *c, struct sockaddr *addr, uint32_t *addrlen);
int pair_peer_addr(tw_conn *c, struct sockaddr *addr, uint32_t *addrlen);
int pair_get_stats(tw_conn *c, struct tw_conn_stats *out);

/* stream.cpp */
ssize_t pair_read(tw_conn *c, void *buf, size_t len);
ssize_t pair_readv(tw_conn *c, const struct iovec *iov, int iovcnt);
ssize_t pair_write(tw_conn *c, const void *buf, size_t len);
ssize_t pair_writev(tw_conn *c, const struct iovec *iov, int iovcnt);
int pair_send_buf_get(tw_conn *c, size_t min_len, struct tw_buf *out);
int pair_send_buf_submit(tw_conn *c, struct tw_buf *buf);
int pair_recv_buf_borrow(tw_conn *c, struct tw_buf *out);
int pair_recv_buf_return(tw_conn *c, struct tw_buf *buf, size_t consumed);

#ifdef __cplusplus
}
#endif

#endif
