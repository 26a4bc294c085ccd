/* SPDX-License-Identifier: MIT */
/* The tls transport's vtable, plugin info and entry point. */
#include "ops.h"

/* Half-close is TLS's own (close_notify, then the inner SHUT_WR); pending
 * data too: bytes OpenSSL has decrypted, or ciphertext it holds, are
 * announced by no fd.  No zero-copy: every byte is encrypted or decrypted
 * into a buffer anyway; the host copies through read and write. */
static const struct tw_transport_ops tls_ops = {
    .size = sizeof(struct tw_transport_ops),
    .version = TW_TRANSPORT_OPS_VERSION,
    .name = "tls",
    .description = "TLS 1.2/1.3 (OpenSSL) over another transport (tls.inner)",
    .caps = TW_CAP_HALF_CLOSE | TW_CAP_PENDING_DATA,
    .init = tls_init,
    .fini = tls_fini,
    .probe = tls_probe,
    .describe = tls_describe,
    .loop_attach = tls_loop_attach,
    .loop_detach = tls_loop_detach,
    .has_pending_data = tls_has_pending,
    .process_pending_data = tls_process_pending,
    .listen = tls_listen,
    .accept = tls_accept,
    .listener_addr = tls_listener_addr,
    .listener_close = tls_listener_close,
    .connect = tls_connect,
    .set_callback = tls_set_callback,
    .set_events = tls_set_events,
    .read = tls_read,
    .readv = tls_readv,
    .write = tls_write,
    .writev = tls_writev,
    .shutdown = tls_shutdown,
    .close = tls_close,
    .get_error = tls_get_error,
    .last_error = tls_last_error,
    .local_addr = tls_local_addr,
    .peer_addr = tls_peer_addr,
    .get_stats = tls_get_stats,
    .ctrl = tls_ctrl,
    .check_config = tls_check_config,
};

static const struct tw_plugin_info tls_info = {
    .size = sizeof(struct tw_plugin_info),
    .version = TW_PLUGIN_INFO_VERSION,
    .abi_major = TW_ABI_MAJOR,
    .abi_minor = TW_ABI_MINOR,
    .name = "tls",
    .plugin_version = TW_PROJECT_VERSION, /* from meson.build */
    .ops = &tls_ops,
};

TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor;
    return host_abi_major == TW_ABI_MAJOR ? &tls_info : NULL;
}
