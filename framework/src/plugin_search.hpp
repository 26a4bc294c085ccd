// SPDX-License-Identifier: MIT
#pragma once

#include <twinwire/config.hpp>

#include <string>
#include <vector>

namespace twinwire {

struct PluginCandidate {
    std::string path; ///< absolute file path
    std::string why;  ///< "plugin_path (twinwire.conf:3)", "installed plugin directory"
};

/// "twinwire-rdma-abi1.so"
std::string plugin_file_name(const std::string &name);

/// The search path in effect and where it came from: plugin_path when set
/// (by file, API or its environment form TWINWIRE_PLUGIN_PATH), else
/// TWINWIRE_PLUGIN_PATH read directly (for configs that never loaded the
/// environment; not in setuid/setgid programs), else empty.
struct PluginSearchPath {
    std::vector<std::string> entries; ///< absolute directories or files; empty = the installed directory
    std::string origin;               ///< "twinwire.conf:3", "environment TWINWIRE_PLUGIN_PATH", ...
};
PluginSearchPath plugin_search_path(const Config &config);

/// The places looked at, in order: the entries of the search path (the only
/// places when it is set, so a typo never loads another copy), or else the
/// installed plugin directory.
std::vector<PluginCandidate> plugin_places(const PluginSearchPath &search);

/// The files to try for transport `name`, in order.  An entry ending in
/// ".so" is a file, tried as it is (it serves the one transport it
/// declares); any other entry is a directory, giving DIR/twinwire-NAME-abiN.so.
/// `notes` gets one line per place considered.
std::vector<PluginCandidate> plugin_candidates(const std::string &name, const Config &config,
                                               std::vector<std::string> *notes);

} // namespace twinwire
