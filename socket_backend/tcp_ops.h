/* SPDX-License-Identifier: MIT */
/*
 * The functions the TCP backend's vtable points to.  They have C linkage so
 * that tcp_ops.c builds the table (and the plugin info) with designated
 * initialisers, as docs/writing-a-plugin.md tells every plugin author to.
 * In C++ they live in namespace twinwire::tcp; in C at file scope.
 */
#ifndef TW_TCP_OPS_H
#define TW_TCP_OPS_H

#include <twinwire/plugin.h>

#ifdef __cplusplus
namespace twinwire::tcp {
extern "C" {
#endif

/* tcp_transport.cpp */
int tcp_init(const struct tw_host *host, tw_transport **out, char *why, size_t why_len);
void tcp_fini(tw_transport *t);
int tcp_probe(const struct tw_host *host, char *buf, size_t len);
int tcp_describe(tw_transport *t, char *buf, size_t len);
int tcp_loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out);
void tcp_loop_detach(tw_transport_loop *tl);
int tcp_get_error(tw_conn *c);
const char *tcp_last_error(tw_conn *c);
int tcp_local_addr(tw_conn *c, struct sockaddr *a, uint32_t *len);
int tcp_peer_addr(tw_conn *c, struct sockaddr *a, uint32_t *len);
int tcp_get_stats(tw_conn *c, struct tw_conn_stats *out);
int tcp_ctrl(tw_transport *t, tw_conn *c, const char *ns, uint32_t op, void *data, size_t len);

/* tcp_config.cpp: the tcp.* keys, validated without init */
int tcp_check_config(const struct tw_host *host, char *why, size_t why_len);

/* tcp_listener.cpp */
int listener_open(tw_transport_loop *tloop, const struct tw_listen_params *params, tw_listener **out);
int listener_accept(tw_listener *l, tw_transport_loop *target, tw_conn **out);
int listener_addr(tw_listener *l, struct sockaddr *addr, uint32_t *addrlen);
/* TW_TCP_CTRL_ADOPT_LISTENER: watch a socket someone else bound. */
int listener_adopt(tw_transport_loop *tloop, int fd, const struct tw_listen_params *params, tw_listener **out);
void listener_close(tw_listener *l);

/* tcp_connect.cpp, tcp_conn.cpp, tcp_io.cpp */
int conn_connect(tw_transport_loop *tloop, const struct tw_connect_params *params, tw_conn **out);
int conn_set_callback(tw_conn *c, tw_conn_cb cb, void *arg);
int conn_set_events(tw_conn *c, uint32_t events);
ssize_t conn_read(tw_conn *c, void *buf, size_t len);
ssize_t conn_readv(tw_conn *c, const struct iovec *iov, int iovcnt);
ssize_t conn_write(tw_conn *c, const void *buf, size_t len);
ssize_t conn_writev(tw_conn *c, const struct iovec *iov, int iovcnt);
int conn_shutdown(tw_conn *c, int how);
void conn_close(tw_conn *c);

/* tcp_zero_copy.cpp */
int conn_send_buf_get(tw_conn *c, size_t min_len, struct tw_buf *out);
int conn_send_buf_submit(tw_conn *c, struct tw_buf *buf);
int conn_recv_buf_borrow(tw_conn *c, struct tw_buf *out);
int conn_recv_buf_return(tw_conn *c, struct tw_buf *buf, size_t consumed);

/* tcp_ops.c */
extern const struct tw_transport_ops tw_tcp_ops;
extern const struct tw_plugin_info tw_tcp_info;

#ifdef __cplusplus
} /* extern "C" */
} /* namespace twinwire::tcp */
#endif

#endif /* TW_TCP_OPS_H */
