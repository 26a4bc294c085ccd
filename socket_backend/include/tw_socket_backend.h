/* SPDX-License-Identifier: MIT */
/**
 * @file tw_socket_backend.h
 * The entry point of the TCP backend that libtwinwire links in: the same
 * signature and the same tw_plugin_info a plugin file returns from
 * TW_PLUGIN_ENTRY.  The backend stands on plugin_api alone; the framework
 * includes this header, never the other way round.
 */
#ifndef TW_SOCKET_BACKEND_H
#define TW_SOCKET_BACKEND_H

#include <twinwire/plugin.h>

TW_BEGIN_DECLS

const struct tw_plugin_info *tw_socket_backend_entry(uint32_t host_abi_major, uint32_t host_abi_minor);

TW_END_DECLS

#endif /* TW_SOCKET_BACKEND_H */
