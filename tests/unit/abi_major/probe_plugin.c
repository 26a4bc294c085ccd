/* SPDX-License-Identifier: MIT */
/* A plugin whose entry point, file name and exports all follow TW_ABI_MAJOR. */
#include <twinwire/plugin.h>

static const struct tw_plugin_info info = {
    .size = sizeof(struct tw_plugin_info),
    .version = TW_PLUGIN_INFO_VERSION,
    .abi_major = TW_ABI_MAJOR,
    .abi_minor = TW_ABI_MINOR,
    .name = "probe",
    .plugin_version = "1",
};

TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t major, uint32_t minor)
{
    (void)minor;
    return major == TW_ABI_MAJOR ? &info : NULL;
}
