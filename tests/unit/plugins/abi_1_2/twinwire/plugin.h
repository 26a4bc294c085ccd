/* SPDX-License-Identifier: MIT */
/**
 * @file twinwire/plugin.h
 * Everything a transport plugin includes: the ABI version, the error model,
 * the host services and the transport vtable.
 *
 * A minimal plugin (see docs/writing-a-plugin.md for a walk-through):
 *
 *     static const struct tw_transport_ops my_ops = {
 *         .size = sizeof(struct tw_transport_ops),
 *         .version = TW_TRANSPORT_OPS_VERSION,
 *         .name = "mine",
 *         .init = my_init, .fini = my_fini, ...
 *     };
 *     static const struct tw_plugin_info my_info = {
 *         .size = sizeof(struct tw_plugin_info),
 *         .version = TW_PLUGIN_INFO_VERSION,
 *         .abi_major = TW_ABI_MAJOR, .abi_minor = TW_ABI_MINOR,
 *         .name = "mine", .plugin_version = "1.0", .ops = &my_ops,
 *     };
 *     TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t major, uint32_t minor)
 *     {
 *         (void)minor;
 *         return major == TW_ABI_MAJOR ? &my_info : NULL;
 *     }
 *
 * Build it as twinwire-mine-abi1.so with -fvisibility=hidden (or a version
 * script) so that the entry point is its only exported symbol.
 */
#ifndef TWINWIRE_PLUGIN_H
#define TWINWIRE_PLUGIN_H

#include <twinwire/abi.h>
#include <twinwire/errors.h>
#include <twinwire/host.h>
#include <twinwire/transport.h>

#endif /* TWINWIRE_PLUGIN_H */
