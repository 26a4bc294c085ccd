// SPDX-License-Identifier: MIT
// For tests that drive a built plugin file through its vtable outside the
// framework (init, check_config, probe): dlopen it as the loader does, and
// hand it a host table with configuration and logging only.  No loop
// services: nothing that reaches a loop may be called with it.
#pragma once

#include <twinwire/transport.h>

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace twinwire::testing {

struct FakeHost {
    static constexpr const char *kOrigin = "test.conf:7";

    explicit FakeHost(std::map<std::string, std::string> settings) : config(std::move(settings))
    {
        table.size = sizeof table;
        table.version = TW_HOST_VERSION;
        table.host_data = this;
        table.config_get = config_get;
        table.log = log_line;
        table.log_enabled = [](const tw_host *, int) { return 1; };
    }
    FakeHost(const FakeHost &) = delete;
    FakeHost &operator=(const FakeHost &) = delete;

    tw_host table{};
    std::map<std::string, std::string> config;
    std::set<std::string> looked_up; ///< every key config_get was asked for
    std::string log;                 ///< every line logged, one per line

private:
    static const char *config_get(const tw_host *host, const char *key, const char **origin)
    {
        auto *self = static_cast<FakeHost *>(host->host_data);
        self->looked_up.insert(key);
        if (origin) *origin = kOrigin;
        auto it = self->config.find(key);
        return it == self->config.end() ? nullptr : it->second.c_str();
    }
    static void log_line(const tw_host *host, int, const char *fmt, ...)
    {
        char line[1024];
        va_list ap;
        va_start(ap, fmt);
        std::vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        static_cast<FakeHost *>(host->host_data)->log += std::string(line) + "\n";
    }
};

/// dlopen a plugin file (RTLD_NOW | RTLD_LOCAL, never closed) and return
/// its vtable; throws std::runtime_error saying what failed.
inline const tw_transport_ops &load_plugin_ops(const char *path)
{
    if (!path) throw std::runtime_error("no plugin path (meson passes it in the environment)");
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw std::runtime_error(std::string("dlopen ") + path + ": " + dlerror());
    auto entry = reinterpret_cast<tw_plugin_entry_fn>(dlsym(lib, TW_PLUGIN_ENTRY_SYMBOL));
    if (!entry) throw std::runtime_error(std::string(path) + " has no " + TW_PLUGIN_ENTRY_SYMBOL);
    const tw_plugin_info *info = entry(TW_ABI_MAJOR, TW_ABI_MINOR);
    if (!info || !info->ops) throw std::runtime_error(std::string(path) + " refused this ABI");
    return *info->ops;
}

/// ops->check_config(settings); *why gets the reason.
inline int check_config(const tw_transport_ops &ops, const std::map<std::string, std::string> &settings,
                        std::string *why = nullptr)
{
    FakeHost host(settings);
    char reason[512] = "";
    int rc = ops.check_config(&host.table, reason, sizeof reason);
    if (why) *why = reason;
    return rc;
}

} // namespace twinwire::testing
