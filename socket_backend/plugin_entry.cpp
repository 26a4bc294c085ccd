// SPDX-License-Identifier: MIT
// The TCP backend as a loadable plugin (twinwire-tcp-abi<MAJOR>.so): the same
// vtable behind the one symbol every plugin exports.
#include <tw_socket_backend.h>

extern "C" TW_EXPORT const tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    return tw_socket_backend_entry(host_abi_major, host_abi_minor);
}
