// SPDX-License-Identifier: MIT
// A blocking loopback TCP client for tests that need the peer's side raw:
// half-closes, exact bytes, a read bounded in time.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

struct SocketClient {
    int fd = -1;

    explicit SocketClient(uint16_t port)
    {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
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
