// SPDX-License-Identifier: MIT
// From the command line to a twinwire Config, and the lines that say which
// transport is in use and why.
#pragma once

#include "options.hpp"

#include <twinwire/config.hpp>
#include <twinwire/runtime.hpp>

#include <string>

namespace twinwire::bench {

/// Defaults of the tool, then --config FILE, TWINWIRE_* variables, then the
/// options.  Throws ConfigError.
Config make_config(const RuntimeOptions &options);

/// "transport: rdma (why)" for stderr.
std::string describe_transport(const Runtime &rt);

/// The mode a client connection asks for, from --transport (or the config).
TransportMode connect_mode(const Runtime &rt);

} // namespace twinwire::bench
