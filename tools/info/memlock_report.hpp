// SPDX-License-Identifier: MIT
#pragma once

#include <string>

/// "RLIMIT_MEMLOCK: soft 8 MiB, hard 8 MiB; CAP_IPC_LOCK: no (the limit applies)"
std::string memlock_report();
