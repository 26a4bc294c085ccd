// SPDX-License-Identifier: MIT
// systemd socket activation: the listening sockets a service manager
// passed (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES; sd_listen_fds(3)).
#pragma once

#include <string>
#include <vector>

namespace twinwire {

struct PassedSocket {
    int fd;
    std::string name; ///< its LISTEN_FDNAMES entry ("unknown" when none, as systemd says)
    bool taken = false;
};

/// The sockets passed to this process (fd 3 on), marked close-on-exec,
/// with the three variables removed so that child processes do not take
/// them too.  None when LISTEN_PID names another process, or in a setuid
/// or setgid program (AT_SECURE: the caller's environment is not trusted).
std::vector<PassedSocket> take_passed_sockets();

} // namespace twinwire
