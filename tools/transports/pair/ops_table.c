/* SPDX-License-Identifier: MIT */
/* pair's vtable and plugin info, with designated initialisers. */
#include "ops.h"

static const struct tw_transport_ops pair_ops = {
    .size = sizeof(struct tw_transport_ops),
    .version = TW_TRANSPORT_OPS_VERSION,
    .name = "pair",
    .description = "in-memory connections between the loops of one process (for tests)",
    .caps = TW_CAP_IPV6 | TW_CAP_HALF_CLOSE | TW_CAP_PENDING_DATA | TW_CAP_ZERO_COPY_SEND | TW_CAP_ZERO_COPY_RECV,
    .init = pair_init,
    .fini = pair_fini,
    .describe = pair_describe,
    .loop_attach = pair_loop_attach,
    .loop_detach = pair_loop_detach,
    .has_pending_data = pair_has_pending_data,
    .process_pending_data = pair_process_pending_data,
    .listen = pair_listen,
    .accept = pair_accept,
    .listener_addr = pair_listener_addr,
    .listener_close = pair_listener_close,
    .connect = pair_connect,
    .set_callback = pair_set_callback,
    .set_events = pair_set_events,
    .read = pair_read,
    .readv = pair_readv,
    .write = pair_write,
    .writev = pair_writev,
    .shutdown = pair_shutdown,
    .close = pair_close,
    .get_error = pair_get_error,
    .last_error = pair_last_error,
    .local_addr = pair_local_addr,
    .peer_addr = pair_peer_addr,
    .get_stats = pair_get_stats,
    .send_buf_get = pair_send_buf_get,
    .send_buf_submit = pair_send_buf_submit,
    .recv_buf_borrow = pair_recv_buf_borrow,
    .recv_buf_return = pair_recv_buf_return,
    .ctrl = pair_ctrl,
    .check_config = pair_check_config,
};

static const struct tw_plugin_info pair_info = {
    .size = sizeof(struct tw_plugin_info),
    .version = TW_PLUGIN_INFO_VERSION,
    .abi_major = TW_ABI_MAJOR,
    .abi_minor = TW_ABI_MINOR,
    .name = "pair",
    .plugin_version = TW_PROJECT_VERSION, /* from meson.build */
    .ops = &pair_ops,
};

TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor; /* any minor: the host reads no member past its own size */
    return host_abi_major == TW_ABI_MAJOR ? &pair_info : NULL;
}
