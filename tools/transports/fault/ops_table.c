/* SPDX-License-Identifier: MIT */
/* The fault transport's vtable, plugin info and entry point. */
#include "ops.h"

/* Half-close and the zero-copy operations are forwarded to the inner
 * transport (tcp, rdma and pair have them); pending data is fault's own:
 * bytes it holds back are announced by no fd. */
static const struct tw_transport_ops fault_ops = {
    .size = sizeof(struct tw_transport_ops),
    .version = TW_TRANSPORT_OPS_VERSION,
    .name = "fault",
    .description = "seeded fault injection over another transport (fault.inner)",
    .caps = TW_CAP_HALF_CLOSE | TW_CAP_PENDING_DATA,
    .init = fault_init,
    .fini = fault_fini,
    .describe = fault_describe,
    .loop_attach = fault_loop_attach,
    .loop_detach = fault_loop_detach,
    .has_pending_data = fault_has_pending,
    .process_pending_data = fault_process_pending,
    .listen = fault_listen,
    .accept = fault_accept,
    .listener_addr = fault_listener_addr,
    .listener_close = fault_listener_close,
    .connect = fault_connect,
    .set_callback = fault_set_callback,
    .set_events = fault_set_events,
    .read = fault_read,
    .readv = fault_readv,
    .write = fault_write,
    .writev = fault_writev,
    .shutdown = fault_shutdown,
    .close = fault_close,
    .get_error = fault_get_error,
    .last_error = fault_last_error,
    .local_addr = fault_local_addr,
    .peer_addr = fault_peer_addr,
    .get_stats = fault_get_stats,
    .strerror = fault_strerror,
    .send_buf_get = fault_send_buf_get,
    .send_buf_submit = fault_send_buf_submit,
    .recv_buf_borrow = fault_recv_buf_borrow,
    .recv_buf_return = fault_recv_buf_return,
    .ctrl = fault_ctrl,
    .check_config = fault_check_config,
};

static const struct tw_plugin_info fault_info = {
    .size = sizeof(struct tw_plugin_info),
    .version = TW_PLUGIN_INFO_VERSION,
    .abi_major = TW_ABI_MAJOR,
    .abi_minor = TW_ABI_MINOR,
    .name = "fault",
    .plugin_version = TW_PROJECT_VERSION, /* from meson.build */
    .ops = &fault_ops,
};

TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor;
    return host_abi_major == TW_ABI_MAJOR ? &fault_info : NULL;
}
