// SPDX-License-Identifier: MIT
// Socket addresses as text (for error messages) and through the ABI's
// uint32_t lengths.
#include "tcp_internal.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace twinwire::tcp {

void sockaddr_text(const struct sockaddr *sa, char *out, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "";
    if (sa->sa_family == AF_INET) {
        auto *in = reinterpret_cast<const sockaddr_in *>(sa);
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        snprintf(out, len, "%s:%u", host, ntohs(in->sin_port));
    } else if (sa->sa_family == AF_INET6) {
        auto *in6 = reinterpret_cast<const sockaddr_in6 *>(sa);
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        snprintf(out, len, "[%s]:%u", host, ntohs(in6->sin6_port));
    } else if (sa->sa_family == AF_UNIX) {
        auto *un = reinterpret_cast<const sockaddr_un *>(sa);
        if (un->sun_path[0]) snprintf(out, len, "unix:%.*s", int(sizeof un->sun_path), un->sun_path);
        else if (un->sun_path[1]) snprintf(out, len, "unix:@%.*s", int(sizeof un->sun_path - 1), un->sun_path + 1);
        else snprintf(out, len, "unix:(unnamed)");
    } else {
        snprintf(out, len, "?");
    }
}

uint32_t sockaddr_len_for(const struct sockaddr *sa)
{
    switch (sa->sa_family) {
    case AF_INET:
        return sizeof(sockaddr_in);
    case AF_INET6:
        return sizeof(sockaddr_in6);
    case AF_UNIX:
        return offsetof(sockaddr_un, sun_path) + 1; // at least one byte of a path or abstract name
    default:
        return 0;
    }
}

int socket_name(int fd, bool peer, struct sockaddr *addr, uint32_t *addrlen)
{
    if (fd < 0) return -ENOTCONN;
    if (!addr || !addrlen) return -EINVAL;
    socklen_t len = *addrlen;
    int rc = peer ? getpeername(fd, addr, &len) : getsockname(fd, addr, &len);
    if (rc < 0) return -errno;
    *addrlen = len;
    return 0;
}

} // namespace twinwire::tcp
