// SPDX-License-Identifier: MIT
#include "addresses.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <stdexcept>

namespace twinwire::conformance {

sockaddr_storage make_address(const std::string &ip, uint16_t port)
{
    sockaddr_storage ss{};
    auto *in = reinterpret_cast<sockaddr_in *>(&ss);
    auto *in6 = reinterpret_cast<sockaddr_in6 *>(&ss);
    if (inet_pton(AF_INET, ip.c_str(), &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
    } else if (inet_pton(AF_INET6, ip.c_str(), &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
    } else {
        throw std::invalid_argument("not an IPv4 or IPv6 address: '" + ip + "'");
    }
    return ss;
}

socklen_t address_length(const sockaddr_storage &addr)
{
    return addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

uint16_t port_of(const sockaddr_storage &addr)
{
    if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6 *>(&addr)->sin6_port);
    return ntohs(reinterpret_cast<const sockaddr_in *>(&addr)->sin_port);
}

void set_port(sockaddr_storage &addr, uint16_t port)
{
    if (addr.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port = htons(port);
    else reinterpret_cast<sockaddr_in *>(&addr)->sin_port = htons(port);
}

bool same_host(const sockaddr_storage &a, const sockaddr_storage &b)
{
    if (a.ss_family != b.ss_family) return false;
    if (a.ss_family == AF_INET6) {
        auto &x = reinterpret_cast<const sockaddr_in6 &>(a);
        auto &y = reinterpret_cast<const sockaddr_in6 &>(b);
        return memcmp(&x.sin6_addr, &y.sin6_addr, sizeof x.sin6_addr) == 0;
    }
    auto &x = reinterpret_cast<const sockaddr_in &>(a);
    auto &y = reinterpret_cast<const sockaddr_in &>(b);
    return x.sin_addr.s_addr == y.sin_addr.s_addr;
}

std::string host_text(const sockaddr_storage &addr)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (addr.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 *>(&addr)->sin6_addr, host, sizeof host);
    else if (addr.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(&addr)->sin_addr, host, sizeof host);
    return host;
}

std::string to_text(const sockaddr_storage &addr)
{
    if (addr.ss_family == AF_INET6) return "[" + host_text(addr) + "]:" + std::to_string(port_of(addr));
    if (addr.ss_family == AF_INET) return host_text(addr) + ":" + std::to_string(port_of(addr));
    return "?";
}

} // namespace twinwire::conformance
