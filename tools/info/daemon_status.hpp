// SPDX-License-Identifier: MIT
// twinwire-info --status: ask a running program on its status_socket for
// its transports, listening addresses and open connections.
#pragma once

#include <string>

/// Print what the program at `path` answers (text, or JSON with `json`);
/// false, with one line on stderr saying why, when nothing answers.
bool print_daemon_status(const std::string &path, bool json);
