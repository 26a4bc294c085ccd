// SPDX-License-Identifier: MIT
// Every plugin file on the search path, opened (never initialised), for
// twinwire-info: what is installed and why each one would not load.
#include "plugin_search.hpp"

#include <twinwire/transport.hpp>

#include <algorithm>
#include <dirent.h>

namespace twinwire {
namespace {

// "twinwire-NAME-abiN.so" -> NAME ("" when the file name is not one).
std::string name_from_file(const std::string &file)
{
    const std::string head = "twinwire-", tail = ".so";
    if (file.size() <= head.size() + tail.size() || file.compare(0, head.size(), head) != 0 ||
        file.compare(file.size() - tail.size(), tail.size(), tail) != 0)
        return {};
    std::string middle = file.substr(head.size(), file.size() - head.size() - tail.size());
    size_t abi = middle.rfind("-abi");
    return abi == std::string::npos || abi == 0 ? std::string() : middle.substr(0, abi);
}

PluginFileReport inspect(const std::string &path, const std::string &file_name)
{
    PluginFileReport r;
    r.path = path;
    r.name = name_from_file(file_name);
    PluginLoadReport load;
    std::unique_ptr<PluginLibrary> lib = PluginLibrary::open_file(path, &load, r.name);
    if (!lib) {
        std::string prefix = path + ": ";
        r.why_not =
            load.reason.compare(0, prefix.size(), prefix) == 0 ? load.reason.substr(prefix.size()) : load.reason;
        return r;
    }
    r.loaded = true;
    r.name = lib->ops().name;
    r.abi_major = load.abi_major;
    r.abi_minor = load.abi_minor;
    r.plugin_version = load.plugin_version;
    r.caps = lib->ops().caps;
    r.description = lib->ops().description ? lib->ops().description : "";
    return r;
}

} // namespace

std::vector<PluginFileReport> list_plugin_files(const Config &config, std::vector<std::string> *places)
{
    std::vector<PluginFileReport> out;
    for (const PluginCandidate &place : plugin_places(plugin_search_path(config))) {
        places->push_back(place.path + " (" + place.why + ")");
        if (place.path.empty() || place.path[0] != '/') continue;
        const size_t slash = place.path.rfind('/');
        if (place.path.size() > 3 && place.path.compare(place.path.size() - 3, 3, ".so") == 0) {
            out.push_back(inspect(place.path, place.path.substr(slash + 1)));
            continue;
        }
        DIR *dir = opendir(place.path.c_str());
        if (!dir) continue;
        std::vector<std::string> files;
        while (struct dirent *e = readdir(dir))
            if (!name_from_file(e->d_name).empty()) files.push_back(e->d_name);
        closedir(dir);
        std::sort(files.begin(), files.end());
        for (const auto &f : files) out.push_back(inspect(place.path + "/" + f, f));
    }
    return out;
}

} // namespace twinwire
