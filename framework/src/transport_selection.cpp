// SPDX-License-Identifier: MIT
// Which transports a process uses, and the one log line that says why.
#include <twinwire/log.hpp>
#include <twinwire/transport.hpp>

#include <dirent.h>
#include <stdexcept>

namespace twinwire {
namespace {

std::string plugin_label(const std::string &name) { return name == "rdma" ? "RDMA plugin" : "plugin '" + name + "'"; }

std::string describe_loaded(const PluginLoadReport &r)
{
    return r.path + " (ABI " + std::to_string(r.abi_major) + "." + std::to_string(r.abi_minor) + ", version " +
           r.plugin_version + ")";
}

// Load and initialise plugin `name`; nullptr and *why when it cannot be used.
std::unique_ptr<Transport> load_plugin(const std::string &name, const Config &config, TransportSelection &sel,
                                       std::string *why)
{
    sel.reports.emplace_back();
    PluginLoadReport &report = sel.reports.back();
    std::unique_ptr<PluginLibrary> lib = PluginLibrary::open(name, config, &report);
    if (!lib) {
        *why = plugin_label(name) + " not loaded: " + report.reason;
        return nullptr;
    }
    std::string refusal;
    std::unique_ptr<Transport> t = Transport::from_plugin(std::move(lib), config, &refusal);
    if (!t) *why = plugin_label(name) + " refused: " + refusal;
    return t;
}

// A device the kernel registered (/sys/class/infiniband/NAME): RDMA hardware,
// or a SoftRoCE device, is there whether or not user space can use it.
bool rdma_device_registered()
{
    DIR *dir = opendir("/sys/class/infiniband");
    if (!dir) return false;
    bool found = false;
    while (const dirent *e = readdir(dir))
        if (e->d_name[0] != '.') found = true;
    closedir(dir);
    return found;
}

// Falling back to TCP is a warning when RDMA was meant to be used here: a
// device is present (a memlock limit or a missing provider disables it) or
// rdma.* settings were given.  On a host without RDMA it is the normal case.
LogLevel fallback_level(const Config &config)
{
    if (!config.unknown_keys_under("rdma.", {}).empty()) return LogLevel::Warn;
    return rdma_device_registered() ? LogLevel::Warn : LogLevel::Info;
}

} // namespace

Transport *TransportSelection::find(const std::string &name) const
{
    if (tcp && name == tcp->name()) return tcp.get();
    for (const auto &p : plugins)
        if (p->name() == name) return p.get();
    return nullptr;
}

std::string TransportSelection::in_use_names() const
{
    std::string names;
    for (const Transport *t : in_use) names += (names.empty() ? "" : "+") + t->name();
    return names;
}

TransportSelection select_transports(const Config &config)
{
    TransportSelection sel;
    check_transport_keys(config);
    sel.tcp = Transport::builtin_tcp(config);
    const ConfigValue *value = config.find("transport");
    const std::string setting = config.transport();
    const std::string origin = value ? value->origin : "default";
    const std::vector<std::string> listed = config.transport_list();
    const bool automatic = listed.size() == 1 && listed[0] == "auto";
    const std::vector<std::string> wanted = automatic ? std::vector<std::string>{"rdma", "tcp"} : listed;
    sel.fallback = wanted.size() > 1;

    std::string skipped;
    for (const std::string &name : wanted) {
        if (name == sel.tcp->name()) {
            sel.in_use.push_back(sel.tcp.get());
            continue;
        }
        std::string why;
        std::unique_ptr<Transport> t = load_plugin(name, config, sel, &why);
        if (t) {
            sel.in_use.push_back(t.get());
            sel.plugins.push_back(std::move(t));
            continue;
        }
        if (!sel.fallback) throw std::runtime_error("transport = " + setting + " (" + origin + ") but " + why);
        skipped += (skipped.empty() ? "" : "; ") + why;
        // auto says it in its one line below; a list says it for each one skipped.
        if (!automatic) TW_INFO("transport", "skipping %s: %s", name.c_str(), why.c_str());
    }
    if (sel.in_use.empty())
        throw std::runtime_error("transport = " + setting + " (" + origin +
                                 "): none of the listed transports can be used: " + skipped);
    sel.chosen = sel.in_use[0]->name();

    if (automatic && sel.chosen == "rdma") {
        sel.reason =
            "transport = auto (" + origin + "); RDMA plugin " + describe_loaded(sel.reports[0]) + " initialised";
    } else if (automatic) {
        sel.reason = skipped + "; falling back to TCP (transport = auto)";
    } else if (!sel.fallback && sel.chosen == sel.tcp->name()) {
        sel.reason = "transport = " + setting + " (" + origin + "); no plugin is loaded";
    } else if (!sel.fallback) {
        sel.reason = "transport = " + setting + " (" + origin + "); " + plugin_label(sel.chosen) + " " +
                     describe_loaded(sel.reports[0]) + " initialised";
    } else {
        sel.reason = "transport = " + setting + " (" + origin + "); in use: " + sel.in_use_names() +
                     (skipped.empty() ? "" : "; skipped: " + skipped);
    }
    const LogLevel level = automatic && sel.chosen != "rdma" ? fallback_level(config) : LogLevel::Info;
    TW_LOG(level, "transport", "using %s: %s", sel.chosen.c_str(), sel.reason.c_str());
    return sel;
}

} // namespace twinwire
