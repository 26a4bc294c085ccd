// SPDX-License-Identifier: MIT
// The TCP backend as a loadable plugin (twinwire-tcp-abi1.so): the same
// vtable behind the one symbol every plugin exports.
#include <twinwire/transport.hpp>

extern "C" TW_EXPORT const tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    return twinwire::tw_socket_backend_entry(host_abi_major, host_abi_minor);
}
