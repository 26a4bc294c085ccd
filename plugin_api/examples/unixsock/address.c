/* SPDX-License-Identifier: MIT */
/* IPv4 addresses of the host <-> socket files of this transport. */
#define _POSIX_C_SOURCE 200809L /* -std=c99 hides POSIX without it */

#include "unixsock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>

/* 0 for a complete IPv4 address, -EAFNOSUPPORT for another family, -EINVAL
 * for no address or one too short for its family. */
int us_check_inet(const struct sockaddr *addr, uint32_t addrlen)
{
    if (!addr || addrlen < sizeof addr->sa_family) return -EINVAL;
    if (addr->sa_family != AF_INET) return addr->sa_family == AF_INET6 ? -EAFNOSUPPORT : -EINVAL;
    return addrlen < sizeof(struct sockaddr_in) ? -EINVAL : 0;
}

/* "<dir>/<ip>-<port>"; -ENAMETOOLONG when it does not fit. */
int us_path_for(const struct tw_transport *t, const struct sockaddr_in *addr, char *out, size_t len)
{
    char ip[INET_ADDRSTRLEN];
    int n;
    if (!inet_ntop(AF_INET, &addr->sin_addr, ip, sizeof ip)) return -errno;
    n = snprintf(out, len, "%s/%s-%u", t->dir, ip, (unsigned)ntohs(addr->sin_port));
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
