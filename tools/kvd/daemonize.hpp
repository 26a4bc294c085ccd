// SPDX-License-Identifier: MIT
// Detaching from the terminal, done before any transport is initialised:
// RDMA objects do not survive fork(), so the Runtime starts in the process
// that stays.  The process that was started waits until the daemon says it
// is serving (or failed), so its exit status tells the truth.
#pragma once

#include <string>

namespace kvd {

class Daemonizer {
public:
    /// fork, setsid, fork.  Returns only in the daemon (the grandchild);
    /// the original process exits with the status the daemon reports.
    /// stdin becomes /dev/null; stdout and stderr stay until ready().
    static Daemonizer detach();

    Daemonizer(Daemonizer &&other) noexcept;
    ~Daemonizer(); ///< reporting nothing counts as failure (exit 1)

    /// Serving: point stdout and stderr at /dev/null and let the original
    /// process exit 0.
    void ready();

private:
    explicit Daemonizer(int fd) : fd_(fd) {}
    int fd_ = -1;
};

/// A pidfile, locked (flock) while this process runs, so a second daemon
/// with the same pidfile refuses to start; removed on destruction.
class Pidfile {
public:
    /// Throws std::runtime_error naming the file and the reason (another
    /// process holds it, cannot create it).
    explicit Pidfile(std::string path);
    ~Pidfile();
    Pidfile(const Pidfile &) = delete;
    Pidfile &operator=(const Pidfile &) = delete;

private:
    std::string path_;
    int fd_ = -1;
};

} // namespace kvd
