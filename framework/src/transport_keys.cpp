// SPDX-License-Identifier: MIT
// Every transport's keys are checked in every mode: a transport that is not
// selected (rdma.* keys with transport = tcp, or in auto mode on a host
// without a device) is loaded far enough to run its check_config, never init.
#include "transport_keys.hpp"

#include "host_objects.hpp"
#include "ops_normalise.hpp"
#include "plugin_search.hpp"

#include <tw_socket_backend.h>

#include <twinwire/log.hpp>
#include <twinwire/transport.hpp>

#include <cerrno>

namespace twinwire {
namespace {

// "rdma.window (r.conf:3), rdma.depth (api)": the keys of one transport that are set.
std::string keys_set(const Config &config, const std::string &name)
{
    std::string list;
    for (const auto &k : config.unknown_keys_under(name + ".", {})) list += (list.empty() ? "" : ", ") + k;
    return list;
}

} // namespace

tw_transport_ops builtin_tcp_ops()
{
    tw_transport_ops ops{};
    const tw_plugin_info *info = tw_socket_backend_entry(TW_ABI_MAJOR, TW_ABI_MINOR);
    std::string why = info ? normalise_ops(info->ops, &ops) : "the built-in TCP backend refused the ABI";
    if (!why.empty()) throw std::runtime_error("built-in TCP backend: " + why);
    return ops;
}

std::string own_port_key(const std::string &name) { return name + ".listen_port"; }

std::optional<uint16_t> own_listen_port(const Config &config, const std::string &name)
{
    const ConfigValue *v = config.find(own_port_key(name));
    if (!v || v->origin == "default") return std::nullopt;
    const std::string &text = v->value;
    bool digits = !text.empty() && text.size() <= 5 && text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoul(text) > 65535)
        throw ConfigError(errc::bad_config, own_port_key(name) + " = '" + text + "' (" + v->origin +
                                                "): expected a port, 0 to 65535 (0: any free port)");
    return static_cast<uint16_t>(std::stoul(text));
}

void throw_unknown_keys(const Config &config, const std::string &name, const std::vector<std::string> &looked_up)
{
    (void)own_listen_port(config, name);
    std::vector<std::string> known = looked_up;
    known.push_back(own_port_key(name));
    std::vector<std::string> unknown = config.unknown_keys_under(name + ".", known);
    if (unknown.empty()) return;
    std::string list;
    for (const auto &k : unknown) list += (list.empty() ? "" : ", ") + k;
    throw ConfigError(errc::unknown_config_key, "unknown key(s) for the " + name + " transport: " + list);
}

bool run_check_config(const tw_transport_ops &ops, const std::string &name, const std::string &path,
                      const Config &config)
{
    HostServices host(name, config);
    TW_DEBUG("loader", "checking the keys of transport %s (%s)", name.c_str(), path.c_str());
    char why[512] = "";
    int rc = ops.check_config(&host.table, why, sizeof why);
    why[sizeof why - 1] = '\0'; // a plugin that filled it without a NUL
    if (rc == -EOPNOTSUPP) return false;
    if (rc < 0) throw ConfigError(std::string(why[0] ? why : "invalid configuration") + " (" + name + " transport)");
    throw_unknown_keys(config, name, host.keys_looked_up());
    return true;
}

void check_transport_keys(const Config &config)
{
    for (const std::string &name : config.transport_key_names()) {
        if (name == "tcp") {
            // Without a check_config of its own, its init checks (it opens nothing).
            if (!run_check_config(builtin_tcp_ops(), name, "built in", config))
                (void)Transport::builtin_tcp(config); // its init checks the keys; nothing is kept
            continue;
        }
        PluginLoadReport report;
        std::unique_ptr<PluginLibrary> lib = PluginLibrary::open(name, config, &report);
        if (!lib)
            throw ConfigError(keys_set(config, name) + ": keys of transport '" + name +
                              "', whose plugin cannot be loaded to check them: " + report.reason +
                              " (remove the keys, or install " + plugin_file_name(name) + ")");
        if (!run_check_config(lib->ops(), name, lib->path(), config))
            TW_WARN("config",
                    "%s: not checked now: the plugin %s has no check_config (its init checks them when it "
                    "is used)",
                    keys_set(config, name).c_str(), lib->path().c_str());
    }
}

std::vector<std::string> transport_keys(const std::string &name, const Config &config)
{
    Config empty;
    const tw_transport_ops *ops = nullptr;
    tw_transport_ops tcp{};
    std::unique_ptr<PluginLibrary> lib;
    if (name == "tcp") {
        tcp = builtin_tcp_ops();
        ops = &tcp;
    } else {
        PluginLoadReport report;
        lib = PluginLibrary::open(name, config, &report);
        if (!lib) return {};
        ops = &lib->ops();
    }
    HostServices host(name, empty);
    char why[512];
    if (ops->check_config(&host.table, why, sizeof why) == -EOPNOTSUPP && name == "tcp") {
        // The built-in backend's init reads every key it knows and opens nothing.
        tw_transport *t = nullptr;
        if (ops->init(&host.table, &t, why, sizeof why) >= 0 && t) ops->fini(t);
    }
    return host.keys_looked_up();
}

} // namespace twinwire
