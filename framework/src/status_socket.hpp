// SPDX-License-Identifier: MIT
// status_socket = PATH: a Unix socket on loop 0 that answers every
// connection with the runtime's status (Runtime::status_text) and closes
// it.  twinwire-info --status reads it: a running daemon's transports,
// their listening addresses and open connections, without a protocol of
// the daemon's own.
#pragma once

#include <functional>
#include <string>

struct event;

namespace twinwire {

class Loop;

class StatusSocket {
public:
    /// Bind PATH (owner-only permissions) and answer on `loop`.  A stale
    /// socket file nobody answers on is replaced; anything else at PATH is
    /// an error (StartupError naming the key, the path and why).
    StatusSocket(Loop &loop, std::string path, std::function<std::string()> report);
    ~StatusSocket(); ///< stops answering and removes the socket file (on the loop's thread)
    StatusSocket(const StatusSocket &) = delete;
    StatusSocket &operator=(const StatusSocket &) = delete;

private:
    static void on_readable(int fd, short, void *arg);
    std::string path_;
    std::function<std::string()> report_;
    int fd_ = -1;
    struct event *event_ = nullptr;
};

} // namespace twinwire
