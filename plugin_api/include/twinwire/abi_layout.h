/* SPDX-License-Identifier: MIT */
/**
 * @file twinwire/abi_layout.h
 * The layout of every struct that crosses the plugin boundary, pinned: size
 * and member offsets on LP64, as ABI 1 defines them.  A change that moves a
 * member fails to compile here, before it reaches a user (the growth rules
 * are in twinwire/abi.h).  transport.h includes this file, so every plugin
 * and the host compile these checks; a plugin author has nothing to read
 * here.
 */
#ifndef TWINWIRE_ABI_LAYOUT_H
#define TWINWIRE_ABI_LAYOUT_H

#include <twinwire/transport.h>

#if TW_ABI_LP64
TW_ABI_ASSERT(sizeof(struct tw_listen_params) == 40, tw_listen_params_size);
TW_ABI_ASSERT(offsetof(struct tw_listen_params, backlog) == 4, tw_listen_params_backlog);
TW_ABI_ASSERT(offsetof(struct tw_listen_params, addr) == 8, tw_listen_params_addr);
TW_ABI_ASSERT(offsetof(struct tw_listen_params, addrlen) == 16, tw_listen_params_addrlen);
TW_ABI_ASSERT(offsetof(struct tw_listen_params, flags) == 20, tw_listen_params_flags);
TW_ABI_ASSERT(offsetof(struct tw_listen_params, on_incoming) == 24, tw_listen_params_on_incoming);
TW_ABI_ASSERT(offsetof(struct tw_listen_params, arg) == 32, tw_listen_params_arg);

TW_ABI_ASSERT(sizeof(struct tw_connect_params) == 40, tw_connect_params_size);
TW_ABI_ASSERT(offsetof(struct tw_connect_params, timeout_ms) == 4, tw_connect_params_timeout_ms);
TW_ABI_ASSERT(offsetof(struct tw_connect_params, addr) == 8, tw_connect_params_addr);
TW_ABI_ASSERT(offsetof(struct tw_connect_params, source) == 16, tw_connect_params_source);
TW_ABI_ASSERT(offsetof(struct tw_connect_params, addrlen) == 24, tw_connect_params_addrlen);
TW_ABI_ASSERT(offsetof(struct tw_connect_params, sourcelen) == 28, tw_connect_params_sourcelen);
TW_ABI_ASSERT(offsetof(struct tw_connect_params, flags) == 32, tw_connect_params_flags);

TW_ABI_ASSERT(TW_LISTEN_PARAMS_SIZE_V1 == 40, tw_listen_params_size_v1);
TW_ABI_ASSERT(TW_CONNECT_PARAMS_SIZE_V1 == 40, tw_connect_params_size_v1);

TW_ABI_ASSERT(sizeof(struct tw_buf) == 40, tw_buf_size);
TW_ABI_ASSERT(TW_BUF_SIZE_V1 == 40, tw_buf_size_v1);
TW_ABI_ASSERT(offsetof(struct tw_buf, flags) == 4, tw_buf_flags);
TW_ABI_ASSERT(offsetof(struct tw_buf, data) == 8, tw_buf_data);
TW_ABI_ASSERT(offsetof(struct tw_buf, len) == 16, tw_buf_len);
TW_ABI_ASSERT(offsetof(struct tw_buf, cap) == 24, tw_buf_cap);
TW_ABI_ASSERT(offsetof(struct tw_buf, token) == 32, tw_buf_token);

TW_ABI_ASSERT(sizeof(struct tw_conn_stats) == 112, tw_conn_stats_size);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, bytes_sent) == 8, tw_conn_stats_bytes_sent);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, bytes_received) == 16, tw_conn_stats_bytes_received);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, messages_sent) == 24, tw_conn_stats_messages_sent);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, messages_received) == 32, tw_conn_stats_messages_received);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, write_would_block) == 40, tw_conn_stats_write_would_block);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, credit_stalls) == 48, tw_conn_stats_credit_stalls);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, rnr_retries) == 56, tw_conn_stats_rnr_retries);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, cq_events) == 64, tw_conn_stats_cq_events);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, pool_exhausted) == 72, tw_conn_stats_pool_exhausted);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, zero_copy_sends) == 80, tw_conn_stats_zero_copy_sends);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, zero_copy_recvs) == 88, tw_conn_stats_zero_copy_recvs);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, control_sent) == 96, tw_conn_stats_control_sent);
TW_ABI_ASSERT(offsetof(struct tw_conn_stats, control_received) == 104, tw_conn_stats_control_received);

TW_ABI_ASSERT(sizeof(struct tw_transport_stats) == 72, tw_transport_stats_size);
TW_ABI_ASSERT(offsetof(struct tw_transport_stats, connections_open) == 8, tw_transport_stats_open);
TW_ABI_ASSERT(offsetof(struct tw_transport_stats, handshakes_aborted) == 32, tw_transport_stats_aborted);
TW_ABI_ASSERT(offsetof(struct tw_transport_stats, quarantined_bytes) == 64, tw_transport_stats_quarantined);

TW_ABI_ASSERT(sizeof(struct tw_transport_ops) == 336, tw_transport_ops_size);
TW_ABI_ASSERT(TW_TRANSPORT_OPS_SIZE_V1 == 296, tw_transport_ops_size_v1);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, name) == 8, tw_ops_name);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, description) == 16, tw_ops_description);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, caps) == 24, tw_ops_caps);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, init) == 32, tw_ops_init);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, fini) == 40, tw_ops_fini);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, probe) == 48, tw_ops_probe);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, describe) == 56, tw_ops_describe);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, loop_attach) == 64, tw_ops_loop_attach);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, loop_detach) == 72, tw_ops_loop_detach);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, has_pending_data) == 80, tw_ops_has_pending_data);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, process_pending_data) == 88, tw_ops_process_pending_data);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, listen) == 96, tw_ops_listen);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, accept) == 104, tw_ops_accept);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, listener_addr) == 112, tw_ops_listener_addr);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, listener_close) == 120, tw_ops_listener_close);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, connect) == 128, tw_ops_connect);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, set_callback) == 136, tw_ops_set_callback);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, set_events) == 144, tw_ops_set_events);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, read) == 152, tw_ops_read);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, readv) == 160, tw_ops_readv);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, write) == 168, tw_ops_write);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, writev) == 176, tw_ops_writev);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, shutdown) == 184, tw_ops_shutdown);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, close) == 192, tw_ops_close);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, get_error) == 200, tw_ops_get_error);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, last_error) == 208, tw_ops_last_error);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, local_addr) == 216, tw_ops_local_addr);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, peer_addr) == 224, tw_ops_peer_addr);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, get_stats) == 232, tw_ops_get_stats);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, strerror) == 240, tw_ops_strerror);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, send_buf_get) == 248, tw_ops_send_buf_get);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, send_buf_submit) == 256, tw_ops_send_buf_submit);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, recv_buf_borrow) == 264, tw_ops_recv_buf_borrow);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, recv_buf_return) == 272, tw_ops_recv_buf_return);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, ctrl) == 280, tw_ops_ctrl);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, check_config) == 288, tw_ops_check_config);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, rma_expose) == 296, tw_ops_rma_expose);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, rma_revoke) == 304, tw_ops_rma_revoke);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, rma_post) == 312, tw_ops_rma_post);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, rma_mem_get) == 320, tw_ops_rma_mem_get);
TW_ABI_ASSERT(offsetof(struct tw_transport_ops, rma_mem_put) == 328, tw_ops_rma_mem_put);

TW_ABI_ASSERT(sizeof(struct tw_rma_request) == 64, tw_rma_request_size);
TW_ABI_ASSERT(TW_RMA_REQUEST_SIZE_V1 == 64, tw_rma_request_size_v1);
TW_ABI_ASSERT(offsetof(struct tw_rma_request, desc) == 8, tw_rma_request_desc);
TW_ABI_ASSERT(offsetof(struct tw_rma_request, desc_len) == 16, tw_rma_request_desc_len);
TW_ABI_ASSERT(offsetof(struct tw_rma_request, offset) == 24, tw_rma_request_offset);
TW_ABI_ASSERT(offsetof(struct tw_rma_request, local) == 32, tw_rma_request_local);
TW_ABI_ASSERT(offsetof(struct tw_rma_request, len) == 40, tw_rma_request_len);
TW_ABI_ASSERT(offsetof(struct tw_rma_request, cb) == 48, tw_rma_request_cb);
TW_ABI_ASSERT(offsetof(struct tw_rma_request, arg) == 56, tw_rma_request_arg);

TW_ABI_ASSERT(sizeof(struct tw_plugin_info) == 40, tw_plugin_info_size);
TW_ABI_ASSERT(TW_PLUGIN_INFO_SIZE_V1 == 40, tw_plugin_info_size_v1);
TW_ABI_ASSERT(offsetof(struct tw_plugin_info, abi_major) == 8, tw_plugin_info_abi_major);
TW_ABI_ASSERT(offsetof(struct tw_plugin_info, abi_minor) == 12, tw_plugin_info_abi_minor);
TW_ABI_ASSERT(offsetof(struct tw_plugin_info, name) == 16, tw_plugin_info_name);
TW_ABI_ASSERT(offsetof(struct tw_plugin_info, plugin_version) == 24, tw_plugin_info_plugin_version);
TW_ABI_ASSERT(offsetof(struct tw_plugin_info, ops) == 32, tw_plugin_info_ops);
#endif

#endif /* TWINWIRE_ABI_LAYOUT_H */
