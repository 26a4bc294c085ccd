// SPDX-License-Identifier: MIT
// The daemon's command line.
#pragma once

#include <twinwire/config.hpp>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kvd {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct CommandLine {
    std::string config_file;
    /// (key, value, origin) in command-line order; applied after the file
    /// and the environment, so they win.
    struct Override {
        std::string key, value, origin;
    };
    std::vector<Override> overrides;
    bool check_config = false;
    bool help = false;
    bool version = false;
};

/// Parsed with CLI11, options applied in command-line order.  Throws
/// UsageError naming the bad argument.
CommandLine parse_command_line(int argc, char **argv);

/// Defaults, then the file, then TWINWIRE_* variables, then the command
/// line.  Throws twinwire::ConfigError naming the key, value and origin.
void load_config(twinwire::Config &config, const CommandLine &cl);

/// --help text: the options from the definitions the parser uses, the
/// defaults and every key from `config`'s schema.
std::string usage_text(const twinwire::Config &config);

/// --check-config output: every key with its value and where it came from.
std::string effective_config_text(const twinwire::Config &config);

} // namespace kvd
