// SPDX-License-Identifier: MIT
// Where the loader looks for a plugin, in order, and why each place is there.
#include "plugin_search.hpp"

#include <twinwire/abi.h>

#include <climits>
#include <cstdlib>
#include <sstream>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TW_BUILD_ROOT
#error "TW_BUILD_ROOT must be defined by the build"
#endif
#ifndef TW_BUILD_PLUGIN_DIR
#error "TW_BUILD_PLUGIN_DIR must be defined by the build"
#endif
#ifndef TW_INSTALL_PLUGIN_DIR
#error "TW_INSTALL_PLUGIN_DIR must be defined by the build"
#endif

namespace twinwire {
namespace {

bool is_directory(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_regular_file(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string join(const std::string &dir, const std::string &file)
{
    return dir.empty() || dir.back() == '/' ? dir + file : dir + "/" + file;
}

// Binaries inside the build tree (tests, tools run before installing) may use
// the plugin built beside them; installed binaries never look there.
bool running_from_build_tree()
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = '\0';
    std::string root = TW_BUILD_ROOT;
    if (!root.empty() && root.back() != '/') root += '/';
    return std::string(exe).compare(0, root.size(), root) == 0;
}

} // namespace

std::string plugin_file_name(const std::string &name)
{
    return "twinwire-" + name + "-abi" + std::to_string(TW_ABI_MAJOR) + ".so";
}

std::vector<PluginCandidate> plugin_candidates(const std::string &name, const std::string &configured,
                                               std::vector<std::string> *notes)
{
    const std::string file = plugin_file_name(name);
    std::vector<PluginCandidate> out;
    if (!configured.empty()) {
        // An explicit choice is the only place looked at: no silent substitute.
        std::string path = is_directory(configured) ? join(configured, file) : configured;
        out.push_back({path, "plugin_path (configured)"});
        notes->push_back(configured + " (plugin_path)");
        return out;
    }
    if (const char *env = std::getenv("TWINWIRE_PLUGIN_PATH")) {
        if (getauxval(AT_SECURE)) {
            notes->push_back("TWINWIRE_PLUGIN_PATH ignored: setuid/setgid process");
        } else {
            std::stringstream ss(env);
            std::string dir;
            while (std::getline(ss, dir, ':')) {
                if (dir.empty()) continue;
                if (dir[0] != '/') {
                    notes->push_back(dir + " (TWINWIRE_PLUGIN_PATH) ignored: not an absolute path");
                    continue;
                }
                // A search path names directories; a file is taken as it is.
                std::string path = is_regular_file(dir) ? dir : join(dir, file);
                out.push_back({path, "TWINWIRE_PLUGIN_PATH"});
                notes->push_back(dir + " (TWINWIRE_PLUGIN_PATH)");
            }
        }
    }
    if (running_from_build_tree()) {
        out.push_back({join(TW_BUILD_PLUGIN_DIR, file), "build tree"});
        notes->push_back(std::string(TW_BUILD_PLUGIN_DIR) + " (build tree)");
    }
    out.push_back({join(TW_INSTALL_PLUGIN_DIR, file), "installed plugin directory"});
    notes->push_back(std::string(TW_INSTALL_PLUGIN_DIR) + " (installed plugin directory)");
    return out;
}

} // namespace twinwire
