// SPDX-License-Identifier: MIT
// What the kvd test clients (kvd-probe, kvd-fault-load) share: reading the
// command line (a usage error is one line on stderr and exit status 2) and
// starting their runtime.
#pragma once

#include <twinwire/runtime.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace kvdtool {

[[noreturn]] inline void usage(const char *program, const std::string &why)
{
    std::fprintf(stderr, "%s: %s\n", program, why.c_str());
    std::exit(2);
}

/// Walks argv: next() gives each argument in turn, value() the one after
/// it (a usage error when there is none).
class Args {
public:
    Args(const char *program, int argc, char **argv) : program_(program), argc_(argc), argv_(argv) {}
    bool next(std::string *arg)
    {
        if (i_ + 1 >= argc_) return false;
        current_ = argv_[++i_];
        *arg = current_;
        return true;
    }
    std::string value()
    {
        if (i_ + 1 >= argc_) usage(program_, current_ + " needs a value");
        return argv_[++i_];
    }

private:
    const char *program_;
    int argc_;
    char **argv_;
    int i_ = 0;
    std::string current_;
};

/// A started runtime over `transport` (the environment's TWINWIRE_* too),
/// logging at `log_level`; nullptr, said on stderr, when it cannot start.
inline std::unique_ptr<twinwire::Runtime> start_runtime(const char *program, const std::string &transport,
                                                        const char *log_level)
{
    twinwire::Config config;
    try {
        config.set("transport", transport, std::string(program) + " --transport");
        config.set("log_level", log_level, program);
        config.load_environment();
    } catch (const twinwire::ConfigError &e) {
        usage(program, e.what());
    }
    auto rt = std::make_unique<twinwire::Runtime>(std::move(config));
    try {
        rt->start();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", program, e.what());
        return nullptr;
    }
    return rt;
}

} // namespace kvdtool
