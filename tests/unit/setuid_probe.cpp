// SPDX-License-Identifier: MIT
// Run as a setuid copy by check_setuid.sh: prints what the configuration
// and the plugin search took from the environment, and the log lines.
// Linked with the framework's objects (no shared libtwinwire): a setuid
// program ignores LD_LIBRARY_PATH and $ORIGIN run paths.
#include "plugin_search.hpp"

#include <twinwire/config.hpp>
#include <twinwire/log.hpp>

#include <cstdio>
#include <sys/auxv.h>

using namespace twinwire;

int main()
{
    std::printf("secure=%lu\n", getauxval(AT_SECURE));
    Config config;
    try {
        config.load_environment();
    } catch (const ConfigError &e) {
        std::printf("config error: %s\n", e.what());
        return 1;
    }
    for (const auto &entry : config.entries())
        if (entry.second.origin != "default")
            std::printf("set %s=%s (%s)\n", entry.first.c_str(), entry.second.value.c_str(),
                        entry.second.origin.c_str());
    PluginSearchPath search = plugin_search_path(config);
    for (const auto &place : plugin_places(search))
        std::printf("search %s (%s)\n", place.path.c_str(), place.why.c_str());
    std::fflush(stdout);
    return 0;
}
