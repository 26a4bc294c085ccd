/* SPDX-License-Identifier: MIT */
/* The TCP backend's vtable and plugin info, written the way the guide tells
 * plugin authors to: designated initialisers, unnamed members left NULL. */
#include "tcp_ops.h"

#include <tw_socket_backend.h>

const struct tw_transport_ops tw_tcp_ops = {
    .size = sizeof(struct tw_transport_ops),
    .version = TW_TRANSPORT_OPS_VERSION,
    .name = "tcp",
    .description = "kernel TCP sockets",
    .caps = TW_CAP_IPV6 | TW_CAP_HALF_CLOSE,
    .init = tcp_init,
    .fini = tcp_fini,
    .probe = tcp_probe,
    .describe = tcp_describe,
    .loop_attach = tcp_loop_attach,
    .loop_detach = tcp_loop_detach,
    /* no has_pending_data / process_pending_data: an fd or a timer announces every event */
    .listen = listener_open,
    .accept = listener_accept,
    .listener_addr = listener_addr,
    .listener_close = listener_close,
    .connect = conn_connect,
    .set_callback = conn_set_callback,
    .set_events = conn_set_events,
    .read = conn_read,
    .readv = conn_readv,
    .write = conn_write,
    .writev = conn_writev,
    .shutdown = conn_shutdown,
    .close = conn_close,
    .get_error = tcp_get_error,
    .last_error = tcp_last_error,
    .local_addr = tcp_local_addr,
    .peer_addr = tcp_peer_addr,
    .get_stats = tcp_get_stats,
    /* no strerror: no codes of its own */
    .send_buf_get = conn_send_buf_get,
    .send_buf_submit = conn_send_buf_submit,
    .recv_buf_borrow = conn_recv_buf_borrow,
    .recv_buf_return = conn_recv_buf_return,
    .ctrl = tcp_ctrl,
    .check_config = tcp_check_config,
};

const struct tw_plugin_info tw_tcp_info = {
    .size = sizeof(struct tw_plugin_info),
    .version = TW_PLUGIN_INFO_VERSION,
    .abi_major = TW_ABI_MAJOR,
    .abi_minor = TW_ABI_MINOR,
    .name = "tcp",
    .plugin_version = TW_PROJECT_VERSION, /* from meson.build */
    .ops = &tw_tcp_ops,
};

const struct tw_plugin_info *tw_socket_backend_entry(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor;
    return host_abi_major == TW_ABI_MAJOR ? &tw_tcp_info : NULL;
}
