// SPDX-License-Identifier: MIT
// The systemd notify protocol (Type=notify): one datagram of "KEY=value"
// lines to the AF_UNIX socket named by $NOTIFY_SOCKET, as sd_notify(3)
// sends it.  Written here rather than linking libsystemd for one sendto().
#pragma once

#include <string>

namespace kvd {

/// Send `state` ("READY=1\nSTATUS=serving ...") to the service manager.
/// Returns "" when it was sent or when no manager asked for it
/// ($NOTIFY_SOCKET unset), else why it could not be sent.  The socket is a
/// path, or an abstract name written with a leading '@'.
std::string notify_service_manager(const std::string &state);

} // namespace kvd
