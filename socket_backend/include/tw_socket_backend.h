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

/** The backend's private ctrl ops (namespace "tcp"). */
enum tw_tcp_ctrl_op {
    /** Listen on a socket that is already bound and listening (systemd
     *  socket activation) instead of binding one: ctrl(transport, NULL,
     *  "tcp", TW_TCP_CTRL_ADOPT_LISTENER, &adopt, sizeof adopt).  The
     *  listener owns the fd from then on (even when this fails); it never
     *  removes the socket's file. */
    TW_TCP_CTRL_ADOPT_LISTENER = 1
};

struct tw_tcp_adopt_listener {
    uint32_t size;                         /**< sizeof(struct tw_tcp_adopt_listener) */
    int32_t fd;                            /**< the listening socket */
    tw_transport_loop *tloop;              /**< the loop that accepts */
    const struct tw_listen_params *params; /**< on_incoming and arg (addr and backlog unused) */
    tw_listener *listener;                 /**< out */
};

TW_END_DECLS

#endif /* TW_SOCKET_BACKEND_H */
