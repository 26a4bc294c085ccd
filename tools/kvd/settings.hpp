// SPDX-License-Identifier: MIT
// The daemon's own configuration keys (kvd.*) beside the framework's.
#pragma once

#include "resp_parser.hpp"

#include <twinwire/config.hpp>

#include <cstddef>
#include <string>

namespace kvd {

/// Add the kvd.* keys to `config`'s schema.
void define_keys(twinwire::Config &config);

struct Settings {
    size_t maxclients = 0;
    RequestLimits limits;
    std::string pidfile; ///< "" = none
    bool daemonize = false;
    bool zero_copy = true; ///< kvd.zero_copy: borrowed receive buffers, lent send buffers

    /// Read from a config with the kvd.* keys; throws ConfigError when the
    /// values do not fit together.
    static Settings from(const twinwire::Config &config);
};

} // namespace kvd
