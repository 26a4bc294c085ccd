// SPDX-License-Identifier: MIT
#include "service_notify.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace kvd {

std::string notify_service_manager(const std::string &state)
{
    const char *where = std::getenv("NOTIFY_SOCKET");
    if (!where || !*where) return "";
    const std::string name = where;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if ((name[0] != '/' && name[0] != '@') || name.size() >= sizeof addr.sun_path)
        return "NOTIFY_SOCKET='" + name + "' is neither an absolute path nor an abstract name ('@...') that fits";
    std::memcpy(addr.sun_path, name.data(), name.size());
    if (name[0] == '@') addr.sun_path[0] = '\0'; // the abstract namespace
    const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());

    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::string("socket(AF_UNIX, SOCK_DGRAM): ") + std::strerror(errno);
    ssize_t sent;
    do {
        sent = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr *>(&addr), len);
    } while (sent < 0 && errno == EINTR);
    const int err = errno;
    close(fd);
    if (sent < 0) return "sendto NOTIFY_SOCKET " + name + ": " + std::strerror(err);
    if (static_cast<size_t>(sent) != state.size()) return "sendto NOTIFY_SOCKET " + name + ": short datagram";
    return "";
}

} // namespace kvd
