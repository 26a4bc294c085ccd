/* SPDX-License-Identifier: MIT */
/*
 * A plugin built against the frozen ABI 1.2 headers (abi_1_2/): its vtable
 * ends at check_config (296 bytes) and has none of 1.3's rma_* members.  It
 * moves data with the real TCP backend under the name "abi12", so the growth
 * tests can run streams, and RMA through the host's emulation, over it.
 */
#include <twinwire/plugin.h>

#include <tcp_ops.h>

#include <string.h>

_Static_assert(TW_ABI_MINOR == 2, "built against the frozen ABI 1.2 headers");
_Static_assert(sizeof(struct tw_transport_ops) == 296, "the ABI 1.2 vtable");

static struct tw_transport_ops g_ops;
static struct tw_plugin_info g_info;

TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t major, uint32_t minor)
{
    (void)minor;
    if (major != TW_ABI_MAJOR) return NULL;
    /* The TCP backend's members as far as a 1.2 table has them. */
    memcpy(&g_ops, &tw_tcp_ops, sizeof g_ops);
    g_ops.size = sizeof(struct tw_transport_ops);
    g_ops.version = TW_TRANSPORT_OPS_VERSION;
    g_ops.name = "abi12";
    g_ops.description = "a plugin built against the ABI 1.2 headers, moving data over TCP";
    g_info = (struct tw_plugin_info){
        .size = sizeof(struct tw_plugin_info),
        .version = TW_PLUGIN_INFO_VERSION,
        .abi_major = TW_ABI_MAJOR,
        .abi_minor = TW_ABI_MINOR,
        .name = "abi12",
        .plugin_version = "1.2",
        .ops = &g_ops,
    };
    return &g_info;
}
