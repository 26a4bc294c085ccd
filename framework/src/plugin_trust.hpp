// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace twinwire {

/// Whether a plugin file may be loaded (ssh StrictModes style): the file,
/// after resolving symbolic links, is a regular file, and it and every
/// directory above it up to / are owned by root or the effective user and
/// not writable by group or others (a root-owned directory with the sticky
/// bit, such as /tmp, may be world-writable: others cannot replace what is
/// in it).  Returns "" and the resolved path, or the reason it is refused.
std::string plugin_file_untrusted(const std::string &path, std::string *resolved);

} // namespace twinwire
