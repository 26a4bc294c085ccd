// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace twinwire {

struct PluginCandidate {
    std::string path; ///< absolute file path
    std::string why;  ///< "plugin_path (configured)", "build tree", ...
};

/// "twinwire-rdma-abi1.so"
std::string plugin_file_name(const std::string &name);

/// The files to try, in order.  `configured` is the plugin_path setting
/// (a file or a directory, absolute).  `notes` gets one line per place
/// considered, including places skipped and why.
std::vector<PluginCandidate> plugin_candidates(const std::string &name, const std::string &configured,
                                               std::vector<std::string> *notes);

} // namespace twinwire
