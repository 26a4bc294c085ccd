/* SPDX-License-Identifier: MIT */
/*
 * The functions the RDMA plugin's vtable points to (entry.cpp).  C linkage,
 * so that ops_table.c builds the table with designated initialisers, as
 * docs/writing-a-plugin.md tells every plugin author to.
 */
#ifndef TW_RDMA_OPS_H
#define TW_RDMA_OPS_H

#include <twinwire/plugin.h>

TW_BEGIN_DECLS

int op_init(const struct tw_host *host, tw_transport **out, char *why, size_t why_len);
int op_check_config(const struct tw_host *host, char *why, size_t why_len);
void op_fini(tw_transport *t);
int op_probe(const struct tw_host *host, char *buf, size_t len);
int op_describe(tw_transport *t, char *buf, size_t len);
int op_loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out);
void op_loop_detach(tw_transport_loop *l);
int op_has_pending(tw_transport_loop *l);
int op_process_pending(tw_transport_loop *l);
int op_listen(tw_transport_loop *l, const struct tw_listen_params *p, tw_listener **out);
int op_accept(tw_listener *ls, tw_transport_loop *target, tw_conn **out);
int op_listener_addr(tw_listener *ls, struct sockaddr *addr, uint32_t *addrlen);
void op_listener_close(tw_listener *ls);
int op_connect(tw_transport_loop *l, const struct tw_connect_params *p, tw_conn **out);
int op_set_callback(tw_conn *c, tw_conn_cb cb, void *arg);
int op_set_events(tw_conn *c, uint32_t events);
ssize_t op_read(tw_conn *c, void *buf, size_t len);
ssize_t op_readv(tw_conn *c, const struct iovec *iov, int iovcnt);
ssize_t op_write(tw_conn *c, const void *buf, size_t len);
ssize_t op_writev(tw_conn *c, const struct iovec *iov, int iovcnt);
int op_shutdown(tw_conn *c, int how);
void op_close(tw_conn *c);
int op_get_error(tw_conn *c);
const char *op_last_error(tw_conn *c);
int op_local_addr(tw_conn *c, struct sockaddr *addr, uint32_t *addrlen);
int op_peer_addr(tw_conn *c, struct sockaddr *addr, uint32_t *addrlen);
int op_get_stats(tw_conn *c, struct tw_conn_stats *out);
const char *op_strerror(int err);
int op_send_buf_get(tw_conn *c, size_t min_len, struct tw_buf *out);
int op_send_buf_submit(tw_conn *c, struct tw_buf *buf);
int op_recv_buf_borrow(tw_conn *c, struct tw_buf *out);
int op_recv_buf_return(tw_conn *c, struct tw_buf *buf, size_t consumed);
int op_rma_expose(tw_conn *c, void *addr, size_t len, uint32_t access, tw_rma_exposure **out, void *desc,
                  size_t *desc_len);
int op_rma_revoke(tw_rma_exposure *e, tw_rma_cb cb, void *arg);
int op_rma_post(tw_conn *c, const struct tw_rma_request *req);
int op_rma_mem_get(tw_conn *c, size_t len, struct tw_buf *out);
int op_rma_mem_put(tw_conn *c, struct tw_buf *buf);
int op_ctrl(tw_transport *t, tw_conn *c, const char *ns, uint32_t op, void *data, size_t len);

TW_END_DECLS

#endif /* TW_RDMA_OPS_H */
