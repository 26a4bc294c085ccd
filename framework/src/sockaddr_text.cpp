// SPDX-License-Identifier: MIT
#include "sockaddr_text.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>

namespace twinwire {

std::string sockaddr_text(const struct sockaddr *sa)
{
    char host[INET6_ADDRSTRLEN] = "";
    if (sa->sa_family == AF_INET) {
        auto *in = reinterpret_cast<const struct sockaddr_in *>(sa);
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        return std::string(host) + ":" + std::to_string(ntohs(in->sin_port));
    }
    if (sa->sa_family == AF_INET6) {
        auto *in6 = reinterpret_cast<const struct sockaddr_in6 *>(sa);
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        return "[" + std::string(host) + "]:" + std::to_string(ntohs(in6->sin6_port));
    }
    return {};
}

std::string resolve_address(const std::string &host, uint16_t port, bool passive, struct sockaddr_storage *out,
                            socklen_t *len)
{
    struct addrinfo hints;
    std::memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    const char *node = (host.empty() || host == "*") ? nullptr : host.c_str();
    std::string service = std::to_string(port);
    struct addrinfo *res = nullptr;
    // Numeric first: no DNS round trip on the event loop for the usual case.
    hints.ai_flags |= AI_NUMERICHOST;
    int rc = getaddrinfo(node, service.c_str(), &hints, &res);
    if (rc == EAI_NONAME && node) {
        hints.ai_flags &= ~AI_NUMERICHOST;
        rc = getaddrinfo(node, service.c_str(), &hints, &res);
    }
    if (rc != 0) return "cannot resolve '" + host + "': " + gai_strerror(rc);
    std::memcpy(out, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return {};
}

} // namespace twinwire
