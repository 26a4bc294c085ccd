// SPDX-License-Identifier: MIT
// A real transport under a name of its own: the TCP backend's vtable
// declared as TW_TEST_NAME, so selection by name, per-name connection
// counts and NAME.* keys are tested with data really moving.  Built as
// twinwire-<name>-abi<N>.so, the file name the loader looks for.
#include <tw_socket_backend.h>

extern "C" TW_EXPORT const tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    static tw_transport_ops ops;
    static tw_plugin_info info;
    const tw_plugin_info *tcp = tw_socket_backend_entry(host_abi_major, host_abi_minor);
    if (!tcp) return nullptr;
    ops = *tcp->ops;
    ops.name = TW_TEST_NAME;
    ops.description = "the TCP backend under another name (loader tests)";
    info = *tcp;
    info.name = TW_TEST_NAME;
    info.plugin_version = "renamed-test";
    info.ops = &ops;
    return &info;
}
