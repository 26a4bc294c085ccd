/* SPDX-License-Identifier: MIT */
/* The tls transport's operations, implemented in C++ (transport.cpp,
 * listener.cpp, conn.cpp) and gathered into its vtable in ops_table.c. */
#ifndef TW_TLS_OPS_H
#define TW_TLS_OPS_H

#include <twinwire/plugin.h>

TW_BEGIN_DECLS

int tls_init(const struct tw_host *host, tw_transport **out, char *why, size_t why_len);
void tls_fini(tw_transport *transport);
int tls_probe(const struct tw_host *host, char *buf, size_t len);
int tls_describe(tw_transport *transport, char *buf, size_t len);
int tls_check_config(const struct tw_host *host, char *why, size_t why_len);
int tls_loop_attach(tw_transport *transport, tw_loop *loop, tw_transport_loop **out);
void tls_loop_detach(tw_transport_loop *tloop);
int tls_has_pending(tw_transport_loop *tloop);
int tls_process_pending(tw_transport_loop *tloop);
int tls_ctrl(tw_transport *transport, tw_conn *conn, const char *ns, uint32_t op, void *data, size_t len);

int tls_listen(tw_transport_loop *tloop, const struct tw_listen_params *params, tw_listener **out);
int tls_accept(tw_listener *listener, tw_transport_loop *target, tw_conn **out);
int tls_listener_addr(tw_listener *listener, struct sockaddr *addr, uint32_t *addrlen);
void tls_listener_close(tw_listener *listener);

int tls_connect(tw_transport_loop *tloop, const struct tw_connect_params *params, tw_conn **out);
int tls_set_callback(tw_conn *conn, tw_conn_cb cb, void *arg);
int tls_set_events(tw_conn *conn, uint32_t events);
ssize_t tls_read(tw_conn *conn, void *buf, size_t len);
ssize_t tls_readv(tw_conn *conn, const struct iovec *iov, int iovcnt);
ssize_t tls_write(tw_conn *conn, const void *buf, size_t len);
ssize_t tls_writev(tw_conn *conn, const struct iovec *iov, int iovcnt);
int tls_shutdown(tw_conn *conn, int how);
void tls_close(tw_conn *conn);
int tls_get_error(tw_conn *conn);
const char *tls_last_error(tw_conn *conn);
int tls_local_addr(tw_conn *conn, struct sockaddr *addr, uint32_t *addrlen);
int tls_peer_addr(tw_conn *conn, struct sockaddr *addr, uint32_t *addrlen);
int tls_get_stats(tw_conn *conn, struct tw_conn_stats *out);

TW_END_DECLS

#endif
