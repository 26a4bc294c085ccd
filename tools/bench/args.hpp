// SPDX-License-Identifier: MIT
// Command-line parsing, with CLI11: one subcommand per mode, and --help
// generated from the same definitions.  Every mistake becomes an ArgError
// whose text names the mode, the option and what was expected; main() prints
// it and exits 2.
#pragma once

#include "options.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace twinwire::bench {

class ArgError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Parse argv[1..] (the mode first).  --help and --version give Mode::Help
/// with the text to print.  Throws ArgError.
Invocation parse_args(const std::vector<std::string> &args);

/// "64", "4k", "64K", "1M", "2MiB" (powers of 1024).  Throws ArgError naming `option`.
size_t parse_size(const std::string &text, const std::string &option);
/// "64,4k,64k,1M".  Throws ArgError.
std::vector<size_t> parse_size_list(const std::string &text, const std::string &option);

/// The RESP test called `name` ("set", "LPUSH"), if there is one.
std::optional<RespTest> resp_test_named(const std::string &name);
/// "set, get, incr, lpush, mget".
std::string resp_test_names();

} // namespace twinwire::bench
