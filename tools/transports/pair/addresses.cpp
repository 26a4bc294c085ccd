// SPDX-License-Identifier: MIT
// IPv4 and IPv6 socket addresses: the names of pair's namespace.
#include "pair.hpp"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

namespace twpair {

int check_address(const sockaddr *addr, uint32_t addrlen)
{
    if (!addr || addrlen < sizeof(sa_family_t)) return -EINVAL;
    if (addr->sa_family == AF_INET) return addrlen < sizeof(sockaddr_in) ? -EINVAL : 0;
    if (addr->sa_family == AF_INET6) return addrlen < sizeof(sockaddr_in6) ? -EINVAL : 0;
    return -EAFNOSUPPORT;
}

sockaddr_storage copy_address(const sockaddr *addr)
{
    sockaddr_storage ss{};
    memcpy(&ss, addr, addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    if (ss.ss_family == AF_INET6) {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&ss);
        in6->sin6_flowinfo = 0;
        in6->sin6_scope_id = 0;
    }
    return ss;
}

uint16_t port_of(const sockaddr_storage &a)
{
    if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6 &>(a).sin6_port);
    return ntohs(reinterpret_cast<const sockaddr_in &>(a).sin_port);
}

void set_port(sockaddr_storage &a, uint16_t port)
{
    if (a.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6 &>(a).sin6_port = htons(port);
    else reinterpret_cast<sockaddr_in &>(a).sin_port = htons(port);
}

bool is_wildcard(const sockaddr_storage &a)
{
    if (a.ss_family == AF_INET6) return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6 &>(a).sin6_addr);
    return reinterpret_cast<const sockaddr_in &>(a).sin_addr.s_addr == htonl(INADDR_ANY);
}

bool same_ip(const sockaddr_storage &a, const sockaddr_storage &b)
{
    if (a.ss_family != b.ss_family) return false;
    if (a.ss_family == AF_INET6)
        return memcmp(&reinterpret_cast<const sockaddr_in6 &>(a).sin6_addr,
                      &reinterpret_cast<const sockaddr_in6 &>(b).sin6_addr, sizeof(in6_addr)) == 0;
    return reinterpret_cast<const sockaddr_in &>(a).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in &>(b).sin_addr.s_addr;
}

socklen_t address_length(const sockaddr_storage &a)
{
    return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

std::string address_text(const sockaddr_storage &a)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (a.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 &>(a).sin6_addr, host, sizeof host);
        return std::string("[") + host + "]:" + std::to_string(port_of(a));
    }
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in &>(a).sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(port_of(a));
}

int copy_out_address(const sockaddr_storage &a, sockaddr *out, uint32_t *len)
{
    socklen_t need = address_length(a);
    if (!out || !len || *len < need) return -EINVAL;
    memcpy(out, &a, need);
    *len = need;
    return 0;
}

} // namespace twpair
