// SPDX-License-Identifier: MIT
// Which transport a process uses, and the one log line that says why.
#include <twinwire/log.hpp>
#include <twinwire/transport.hpp>

#include <stdexcept>

namespace twinwire {

TransportSelection select_transports(const Config &config)
{
    TransportSelection sel;
    sel.tcp = Transport::builtin_tcp(config);
    const ConfigValue *mode_value = config.find("transport");
    const std::string origin = mode_value ? mode_value->origin : "default";
    const TransportMode mode = config.transport();

    if (mode == TransportMode::Tcp) {
        sel.chosen = "tcp";
        sel.reason = "transport = tcp (" + origin + "); the RDMA plugin is not loaded";
        TW_INFO("transport", "using tcp: %s", sel.reason.c_str());
        return sel;
    }

    std::string why;
    std::unique_ptr<PluginLibrary> lib = PluginLibrary::open("rdma", config, &sel.report);
    if (!lib) why = "RDMA plugin not loaded: " + sel.report.reason;
    else if (!(sel.rdma = Transport::from_plugin(std::move(lib), config, &why))) why = "RDMA plugin refused: " + why;

    if (sel.rdma) {
        sel.chosen = "rdma";
        sel.reason = "transport = " + std::string(to_string(mode)) + " (" + origin + "); RDMA plugin " +
                     sel.report.path + " (ABI " + std::to_string(sel.report.abi_major) + "." +
                     std::to_string(sel.report.abi_minor) + ", version " + sel.report.plugin_version +
                     ") initialised";
        TW_INFO("transport", "using rdma: %s", sel.reason.c_str());
        return sel;
    }
    if (mode == TransportMode::Rdma)
        throw std::runtime_error("transport = rdma (" + origin + ") but " + why);
    sel.chosen = "tcp";
    sel.reason = why + "; falling back to TCP (transport = auto)";
    TW_INFO("transport", "using tcp: %s", sel.reason.c_str());
    return sel;
}

} // namespace twinwire
