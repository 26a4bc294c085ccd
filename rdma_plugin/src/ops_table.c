/* SPDX-License-Identifier: MIT */
/* The RDMA plugin's vtable, plugin info and entry point: the one exported
 * symbol (twinwire_plugin_entry_v<TW_ABI_MAJOR>). */
#include "ops.h"

static const struct tw_transport_ops rdma_ops = {
    .size = sizeof(struct tw_transport_ops),
    .version = TW_TRANSPORT_OPS_VERSION,
    .name = "rdma",
    .description =
        "RDMA (RoCE v2 / InfiniBand) byte streams: WRITE_WITH_IMM into a registered ring, credit flow control",
    .caps = TW_CAP_ZERO_COPY_SEND | TW_CAP_ZERO_COPY_RECV | TW_CAP_HALF_CLOSE | TW_CAP_PENDING_DATA |
            TW_CAP_KERNEL_BYPASS | TW_CAP_BUSY_POLL | TW_CAP_RMA,
    .init = op_init,
    .fini = op_fini,
    .probe = op_probe,
    .describe = op_describe,
    .loop_attach = op_loop_attach,
    .loop_detach = op_loop_detach,
    .has_pending_data = op_has_pending,
    .process_pending_data = op_process_pending,
    .listen = op_listen,
    .accept = op_accept,
    .listener_addr = op_listener_addr,
    .listener_close = op_listener_close,
    .connect = op_connect,
    .set_callback = op_set_callback,
    .set_events = op_set_events,
    .read = op_read,
    .readv = op_readv,
    .write = op_write,
    .writev = op_writev,
    .shutdown = op_shutdown,
    .close = op_close,
    .get_error = op_get_error,
    .last_error = op_last_error,
    .local_addr = op_local_addr,
    .peer_addr = op_peer_addr,
    .get_stats = op_get_stats,
    .strerror = op_strerror,
    .send_buf_get = op_send_buf_get,
    .send_buf_submit = op_send_buf_submit,
    .recv_buf_borrow = op_recv_buf_borrow,
    .recv_buf_return = op_recv_buf_return,
    .ctrl = op_ctrl,
    .check_config = op_check_config,
    .rma_expose = op_rma_expose,
    .rma_revoke = op_rma_revoke,
    .rma_post = op_rma_post,
    .rma_mem_get = op_rma_mem_get,
    .rma_mem_put = op_rma_mem_put,
};

static const struct tw_plugin_info rdma_info = {
    .size = sizeof(struct tw_plugin_info),
    .version = TW_PLUGIN_INFO_VERSION,
    .abi_major = TW_ABI_MAJOR,
    .abi_minor = TW_ABI_MINOR,
    .name = "rdma",
    .plugin_version = TW_PROJECT_VERSION, /* from meson.build */
    .ops = &rdma_ops,
};

TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor;
    return host_abi_major == TW_ABI_MAJOR ? &rdma_info : NULL;
}
