/* SPDX-License-Identifier: MIT */
/* The fault transport's operations, implemented in C++ (transport.cpp,
 * listener.cpp, conn.cpp) and gathered into its vtable in ops_table.c. */
#ifndef TW_FAULT_OPS_H
#define TW_FAULT_OPS_H

#include <twinwire/plugin.h>

TW_BEGIN_DECLS

int fault_init(const struct tw_host *host, tw_transport **out, char *why, size_t why_len);
void fault_fini(tw_transport *transport);
int fault_describe(tw_transport *transport, char *buf, size_t len);
int fault_check_config(const struct tw_host *host, char *why, size_t why_len);
int fault_loop_attach(tw_transport *transport, tw_loop *loop, tw_transport_loop **out);
void fault_loop_detach(tw_transport_loop *tloop);
int fault_has_pending(tw_transport_loop *tloop);
int fault_process_pending(tw_transport_loop *tloop);
const char *fault_strerror(int err);
int fault_ctrl(tw_transport *transport, tw_conn *conn, const char *ns, uint32_t op, void *data, size_t len);

int fault_listen(tw_transport_loop *tloop, const struct tw_listen_params *params, tw_listener **out);
int fault_accept(tw_listener *listener, tw_transport_loop *target, tw_conn **out);
int fault_listener_addr(tw_listener *listener, struct sockaddr *addr, uint32_t *addrlen);
void fault_listener_close(tw_listener *listener);

int fault_connect(tw_transport_loop *tloop, const struct tw_connect_params *params, tw_conn **out);
int fault_set_callback(tw_conn *conn, tw_conn_cb cb, void *arg);
int fault_set_events(tw_conn *conn, uint32_t events);
ssize_t fault_read(tw_conn *conn, void *buf, size_t len);
ssize_t fault_readv(tw_conn *conn, const struct iovec *iov, int iovcnt);
ssize_t fault_write(tw_conn *conn, const void *buf, size_t len);
ssize_t fault_writev(tw_conn *conn, const struct iovec *iov, int iovcnt);
int fault_shutdown(tw_conn *conn, int how);
void fault_close(tw_conn *conn);
int fault_get_error(tw_conn *conn);
const char *fault_last_error(tw_conn *conn);
int fault_local_addr(tw_conn *conn, struct sockaddr *addr, uint32_t *addrlen);
int fault_peer_addr(tw_conn *conn, struct sockaddr *addr, uint32_t *addrlen);
int fault_get_stats(tw_conn *conn, struct tw_conn_stats *out);
int fault_send_buf_get(tw_conn *conn, size_t min_len, struct tw_buf *out);
int fault_send_buf_submit(tw_conn *conn, struct tw_buf *buf);
int fault_recv_buf_borrow(tw_conn *conn, struct tw_buf *out);
int fault_recv_buf_return(tw_conn *conn, struct tw_buf *buf, size_t consumed);

TW_END_DECLS

#endif
