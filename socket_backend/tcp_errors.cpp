// SPDX-License-Identifier: MIT
// One-line error texts: the call, the errno in words and by name, and a hint.
#include "tcp_internal.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace twinwire::tcp {

const char *hint_for(int err)
{
    switch (err < 0 ? -err : err) {
    case ECONNREFUSED:
        return "nothing listens on that address and port";
    case ETIMEDOUT:
        return "no answer from the peer; check the address, routes and firewalls";
    case ECONNRESET:
        return "the peer reset the connection (it crashed, or closed with unread data)";
    case EPIPE:
        return "the peer closed the connection";
    case EHOSTUNREACH:
    case ENETUNREACH:
        return "no route to the peer; check the address and the routing table";
    case EADDRINUSE:
        return "another socket holds this address and port; pick another port or stop that process";
    case EADDRNOTAVAIL:
        return "the address is not assigned to any local interface";
    case EAFNOSUPPORT:
        return "this address family is not available in the kernel (IPv6 disabled?)";
    case EMFILE:
    case ENFILE:
        return "out of file descriptors; raise the limit (ulimit -n, LimitNOFILE=)";
    case EACCES:
        return "ports below 1024 need CAP_NET_BIND_SERVICE";
    case ENOBUFS:
    case ENOMEM:
        return "the kernel is out of socket memory";
    default:
        return "";
    }
}

void format_error(char *out, size_t len, const char *call, const char *where, int err)
{
    int e = err < 0 ? -err : err;
    const char *name = strerrorname_np(e);
    const char *hint = hint_for(e);
    bool has_where = where && *where;
    snprintf(out, len, "%s%s%s%s: %s (%s)%s%s", call, has_where ? " (" : "", has_where ? where : "",
             has_where ? ")" : "", strerror(e), name ? name : "?", *hint ? "; hint: " : "", hint);
}

} // namespace twinwire::tcp
