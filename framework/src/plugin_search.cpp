// SPDX-License-Identifier: MIT
// Where the loader looks for a plugin, in order, and why each place is there.
#include "plugin_search.hpp"

#include <twinwire/abi.h>

#include <cstdlib>
#include <sys/auxv.h>

#ifndef TW_INSTALL_PLUGIN_DIR
#error "TW_INSTALL_PLUGIN_DIR must be defined by the build"
#endif

namespace twinwire {
namespace {

// "/x/twinwire-foo-abi1.so" names a file; anything else a directory.
bool names_a_file(const std::string &path) { return path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0; }

std::string join(const std::string &dir, const std::string &file)
{
    return dir.empty() || dir.back() == '/' ? dir + file : dir + "/" + file;
}

std::vector<std::string> split_path(const std::string &text)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t colon = text.find(':', start);
        if (colon == std::string::npos) colon = text.size();
        out.push_back(text.substr(start, colon - start));
        start = colon + 1;
    }
    return out;
}

} // namespace

std::string plugin_file_name(const std::string &name)
{
    return "twinwire-" + name + "-abi" + std::to_string(TW_ABI_MAJOR) + ".so";
}

PluginSearchPath plugin_search_path(const Config &config)
{
    PluginSearchPath out;
    const ConfigValue *v = config.find("plugin_path");
    if (v && !v->value.empty()) {
        out.entries = split_path(v->value);
        out.origin = "plugin_path, " + v->origin;
        return out;
    }
    const char *env = std::getenv("TWINWIRE_PLUGIN_PATH");
    if (env && *env && !getauxval(AT_SECURE)) {
        out.entries = split_path(env);
        out.origin = "environment TWINWIRE_PLUGIN_PATH";
    }
    return out;
}

std::vector<PluginCandidate> plugin_places(const PluginSearchPath &search)
{
    if (search.entries.empty()) return {{TW_INSTALL_PLUGIN_DIR, "installed plugin directory"}};
    std::vector<PluginCandidate> out;
    for (const auto &e : search.entries) out.push_back({e, search.origin});
    return out;
}

std::vector<PluginCandidate> plugin_candidates(const std::string &name, const Config &config,
                                               std::vector<std::string> *notes)
{
    const std::string file = plugin_file_name(name);
    std::vector<PluginCandidate> out;
    for (const PluginCandidate &place : plugin_places(plugin_search_path(config))) {
        if (place.path.empty() || place.path[0] != '/') {
            // Never relative to the working directory; and no fallback either.
            notes->push_back("'" + place.path + "' (" + place.why + ") ignored: not an absolute path");
            continue;
        }
        notes->push_back(place.path + " (" + place.why + ")");
        out.push_back({names_a_file(place.path) ? place.path : join(place.path, file), place.why});
    }
    return out;
}

} // namespace twinwire
