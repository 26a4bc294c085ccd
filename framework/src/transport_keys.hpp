// SPDX-License-Identifier: MIT
// A transport's configuration keys, checked without init.
#pragma once

#include <twinwire/config.hpp>
#include <twinwire/transport.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace twinwire {

/// The built-in TCP backend's operations, checked and completed (throws
/// std::runtime_error if it refuses this ABI).
tw_transport_ops builtin_tcp_ops();

/// "NAME.listen_port": the one key under a transport's prefix that the
/// framework reads, not the transport: that transport's own listening port.
std::string own_port_key(const std::string &name);
/// NAME.listen_port when set; throws ConfigError for a value that is not a port.
std::optional<uint16_t> own_listen_port(const Config &config, const std::string &name);

/// Throw ConfigError when keys under "name." are set but not in `looked_up`
/// (NAME.listen_port is always known, and checked here).
void throw_unknown_keys(const Config &config, const std::string &name, const std::vector<std::string> &looked_up);

/// Run `ops.check_config` for transport `name` (loaded from `path`): throws
/// ConfigError for a bad value or an unknown key; false when the transport
/// has no check_config (nothing was checked).
bool run_check_config(const tw_transport_ops &ops, const std::string &name, const std::string &path,
                      const Config &config);

} // namespace twinwire
