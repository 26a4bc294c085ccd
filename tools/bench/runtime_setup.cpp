// SPDX-License-Identifier: MIT
#include "runtime_setup.hpp"

namespace twinwire::bench {

Config make_config(const RuntimeOptions &options)
{
    Config config;
    // Quieter than a daemon: the tool prints its own summary of what matters.
    config.set("log_level", "warn", "twinwire-bench default");
    if (!options.config_file.empty()) config.load_file(options.config_file);
    config.load_environment();
    if (options.transport) config.set("transport", *options.transport, "--transport");
    if (options.threads) config.set("threads", std::to_string(*options.threads), "--threads");
    // perftest's -d and -x: which RDMA device, and the GID to connect from.
    if (options.device) config.set("rdma.device", *options.device, "--device");
    if (options.gid_index) config.set("rdma.gid_index", std::to_string(*options.gid_index), "--gid-index");
    return config;
}

std::string describe_transport(const Runtime &rt)
{
    return "transport: " + rt.transport_name() + " (" + rt.transport_reason() + ")";
}

} // namespace twinwire::bench
