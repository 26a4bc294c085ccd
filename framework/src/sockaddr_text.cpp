// SPDX-License-Identifier: MIT
#include "sockaddr_text.hpp"

#include <arpa/inet.h>
#include <cstddef>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <unistd.h>

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
    if (sa->sa_family == AF_UNIX) {
        auto *un = reinterpret_cast<const struct sockaddr_un *>(sa);
        if (un->sun_path[0]) return "unix:" + std::string(un->sun_path, strnlen(un->sun_path, sizeof un->sun_path));
        if (un->sun_path[1])
            return "unix:@" + std::string(un->sun_path + 1, strnlen(un->sun_path + 1, sizeof un->sun_path - 1));
        return "unix:";
    }
    return {};
}

namespace {

bool parse_unix(const std::string &host, SocketAddress *out, std::string *why)
{
    std::string name = host.substr(5);
    bool abstract = !name.empty() && name[0] == '@';
    auto *un = reinterpret_cast<struct sockaddr_un *>(&out->ss);
    if (name.size() <= (abstract ? 1u : 0u) || name.size() >= sizeof un->sun_path) {
        *why = "'" + host + "': a Unix socket needs a path (or @name) of 1.." +
               std::to_string(sizeof un->sun_path - 1) + " bytes";
        return false;
    }
    std::memset(&out->ss, 0, sizeof out->ss);
    un->sun_family = AF_UNIX;
    std::memcpy(un->sun_path, name.data(), name.size());
    if (abstract) un->sun_path[0] = '\0'; // Linux's abstract namespace: no file
    // An abstract name is exactly its bytes; a path ends at its NUL.
    out->len = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + name.size() + (abstract ? 0 : 1));
    return true;
}

bool host_has_ipv6()
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    close(fd);
    return true;
}

} // namespace

bool parse_literal_address(const std::string &host, uint16_t port, SocketAddress *out, std::string *why)
{
    if (host.compare(0, 5, "unix:") == 0) return parse_unix(host, out, why);
    std::string bare =
        host.size() > 2 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2) : host;
    std::memset(&out->ss, 0, sizeof out->ss);
    auto *in = reinterpret_cast<struct sockaddr_in *>(&out->ss);
    auto *in6 = reinterpret_cast<struct sockaddr_in6 *>(&out->ss);
    if (inet_pton(AF_INET, bare.c_str(), &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        out->len = sizeof *in;
        return true;
    }
    if (bare.find('%') == std::string::npos && inet_pton(AF_INET6, bare.c_str(), &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        out->len = sizeof *in6;
        return true;
    }
    // Scoped IPv6 literals (fe80::1%eth0) and the like: numeric getaddrinfo.
    struct addrinfo hints {
    }, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    if (getaddrinfo(bare.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return false;
    std::memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
    out->len = res->ai_addrlen;
    freeaddrinfo(res);
    return true;
}

void add_address(std::vector<SocketAddress> *list, const struct sockaddr *sa, socklen_t len)
{
    if (len > sizeof(struct sockaddr_storage)) return;
    SocketAddress a;
    std::memcpy(&a.ss, sa, len);
    a.len = len;
    for (const auto &b : *list)
        if (b.len == a.len && std::memcmp(&b.ss, &a.ss, a.len) == 0) return;
    list->push_back(a);
}

std::string listen_addresses(const std::string &host, uint16_t port, std::vector<SocketAddress> *out)
{
    out->clear();
    SocketAddress one;
    std::string why;
    if (host.empty() || host == "*" || host == "::") {
        bool v6 = host_has_ipv6();
        parse_literal_address(v6 ? "::" : "0.0.0.0", port, &one, &why);
        out->push_back(one);
        return {};
    }
    if (parse_literal_address(host, port, &one, &why)) {
        out->push_back(one);
        return {};
    }
    if (!why.empty()) return why;
    struct addrinfo hints {
    }, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
    int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (rc != 0) return "cannot resolve '" + host + "': " + gai_strerror(rc);
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) add_address(out, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(res);
    return out->empty() ? "cannot resolve '" + host + "': no stream address" : std::string();
}

} // namespace twinwire
