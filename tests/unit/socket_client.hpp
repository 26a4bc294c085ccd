// SPDX-License-Identifier: MIT
// A blocking loopback TCP client for tests that need the peer's side raw:
// half-closes, exact bytes, a read bounded in time.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>

/// A blocking socket connected to 127.0.0.1:port, or -1.
inline int connect_loopback(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0) return fd;
    if (fd >= 0) ::close(fd);
    return -1;
}

struct SocketClient {
    int fd = -1;

    explicit SocketClient(uint16_t port) : fd(connect_loopback(port)) {}
    ~SocketClient()
    {
        if (fd >= 0) ::close(fd);
    }
    SocketClient(const SocketClient &) = delete;
    SocketClient &operator=(const SocketClient &) = delete;

    bool send_all(const std::string &bytes) const
    {
        return fd >= 0 && ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
    }
    void shutdown_write() const { ::shutdown(fd, SHUT_WR); }

    /// Bytes until there are `size`, the stream ends, or `bound_ms` passes
    /// without a byte: a test waits for the reply it checks, not a fixed time.
    std::string read_count(size_t size, int bound_ms) const
    {
        std::string got;
        while (fd >= 0 && got.size() < size) {
            pollfd p{fd, POLLIN, 0};
            if (poll(&p, 1, bound_ms) <= 0) break;
            char buf[4096];
            ssize_t n = ::recv(fd, buf, std::min(sizeof buf, size - got.size()), 0);
            if (n <= 0) break;
            got.append(buf, static_cast<size_t>(n));
        }
        return got;
    }

    /// Everything until end-of-stream or a reset, or until `bound_ms` passes
    /// without a byte.  *ended tells whether the stream ended.
    std::string read_to_end(int bound_ms, bool *ended = nullptr) const
    {
        std::string got;
        bool end = false;
        while (fd >= 0) {
            pollfd p{fd, POLLIN, 0};
            if (poll(&p, 1, bound_ms) <= 0) break;
            char buf[4096];
            ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) {
                end = true;
                break;
            }
            got.append(buf, static_cast<size_t>(n));
        }
        if (ended) *ended = end;
        return got;
    }
};
