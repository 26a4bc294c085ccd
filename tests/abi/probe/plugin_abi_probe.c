/* SPDX-License-Identifier: MIT */
/*
 * The plugin ABI made into a library for abidw/abidiff: a C plugin ABI has
 * no exported functions of its own, so this probe exports one function per
 * struct, table, enum and callback type that crosses the plugin boundary,
 * and the plugin entry point itself.  Built with -g from the INSTALLED
 * headers (tests/abi/abi-lib.sh), its ABI is the plugin ABI's.  The
 * functions do nothing: only their types matter.
 */
#include <twinwire/plugin.h>

/* The tables and parameter blocks (each starts with `uint32_t size`). */
TW_EXPORT void tw_abi_probe_host(const struct tw_host *host) { (void)host; }
TW_EXPORT void tw_abi_probe_transport_ops(const struct tw_transport_ops *ops) { (void)ops; }
TW_EXPORT void tw_abi_probe_plugin_info(const struct tw_plugin_info *info) { (void)info; }
TW_EXPORT void tw_abi_probe_listen_params(const struct tw_listen_params *params) { (void)params; }
TW_EXPORT void tw_abi_probe_connect_params(const struct tw_connect_params *params) { (void)params; }
TW_EXPORT void tw_abi_probe_buf(struct tw_buf *buf) { (void)buf; }
TW_EXPORT void tw_abi_probe_conn_stats(struct tw_conn_stats *stats) { (void)stats; }
TW_EXPORT void tw_abi_probe_transport_stats(struct tw_transport_stats *stats) { (void)stats; }
TW_EXPORT void tw_abi_probe_rma_request(const struct tw_rma_request *req) { (void)req; }

/* The enums: flag bits, op numbers and error codes are values of the ABI. */
TW_EXPORT void tw_abi_probe_conn_events(enum tw_conn_events events) { (void)events; }
TW_EXPORT void tw_abi_probe_caps(enum tw_caps caps) { (void)caps; }
TW_EXPORT void tw_abi_probe_listen_flags(enum tw_listen_flags flags) { (void)flags; }
TW_EXPORT void tw_abi_probe_rma_access(enum tw_rma_access access) { (void)access; }
TW_EXPORT void tw_abi_probe_rma_op(enum tw_rma_op op) { (void)op; }
TW_EXPORT void tw_abi_probe_ctrl_op(enum tw_ctrl_op op) { (void)op; }
TW_EXPORT void tw_abi_probe_watch_events(enum tw_watch_events events) { (void)events; }
TW_EXPORT void tw_abi_probe_log_level(enum tw_log_level level) { (void)level; }
TW_EXPORT void tw_abi_probe_error(enum tw_error err) { (void)err; }

/* The callback types, also those no struct above holds. */
TW_EXPORT void tw_abi_probe_callbacks(tw_conn_cb conn_cb, tw_incoming_cb incoming_cb, tw_rma_cb rma_cb,
                                      tw_watch_cb watch_cb, tw_timer_cb timer_cb, tw_task_fn task_fn)
{
    (void)conn_cb;
    (void)incoming_cb;
    (void)rma_cb;
    (void)watch_cb;
    (void)timer_cb;
    (void)task_fn;
}
TW_EXPORT void tw_abi_probe_entry_fn(tw_plugin_entry_fn entry) { (void)entry; }

/* The entry point with the prototype transport.h declares for every plugin. */
TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_major;
    (void)host_abi_minor;
    return NULL;
}
