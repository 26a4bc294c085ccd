// SPDX-License-Identifier: MIT
// twinwire-info: which transport this host would use, and why.  Like
// ibv_devinfo / fi_info, but answers the question a deployer asks first.
#include "memlock_report.hpp"

#include <twinwire/log.hpp>
#include <twinwire/transport.hpp>

#include <cstdio>
#include <cstring>
#include <string>

using namespace twinwire;

namespace {

void usage(FILE *out)
{
    std::fprintf(out,
                 "usage: twinwire-info [--config FILE] [--transport auto|tcp|NAME[,NAME...]] [--plugin PATH] [--verbose]\n"
                 "\n"
                 "Says which transport a twinwire program started here would use and why: the RDMA plugin\n"
                 "search path and what each place gave, the plugin's ABI, its devices and ports, RLIMIT_MEMLOCK.\n"
                 "Settings come from FILE and TWINWIRE_* variables, as in a daemon.  Exit status: 0 when the\n"
                 "chosen transport can start, 1 when it cannot (transport = rdma without usable RDMA), 2 on usage.\n");
}

void print_indented(const std::string &text)
{
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::printf("  %s\n", text.substr(start, end - start).c_str());
        start = end + 1;
    }
}

} // namespace

int main(int argc, char **argv)
{
    Config config;
    bool verbose = false;
    try {
        for (int i = 1; i < argc; ++i) {
            std::string arg = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw ConfigError(arg + " needs a value");
                return argv[++i];
            };
            if (arg == "--config") config.load_file(value());
            else if (arg == "--transport") config.set("transport", value(), "--transport");
            else if (arg == "--plugin") config.set("plugin_path", value(), "--plugin");
            else if (arg == "--verbose" || arg == "-v") verbose = true;
            else if (arg == "--help" || arg == "-h") {
                usage(stdout);
                return 0;
            } else {
                std::fprintf(stderr, "twinwire-info: unknown argument '%s'\n", arg.c_str());
                usage(stderr);
                return 2;
            }
        }
        config.load_environment();
    } catch (const ConfigError &e) {
        std::fprintf(stderr, "twinwire-info: %s\n", e.what());
        return 2;
    }
    log::set_level(verbose ? LogLevel::Debug : LogLevel::Error);

    const ConfigValue *mode = config.find("transport");
    std::printf("twinwire ABI %d.%d\n", TW_ABI_MAJOR, TW_ABI_MINOR);
    std::printf("transport setting: %s (%s)\n", mode->value.c_str(), mode->origin.c_str());
    std::printf("\n");

    std::string verdict, why;
    bool can_start = true;
    if (config.transport() == "tcp") {
        verdict = "tcp";
        why = "transport = tcp: the RDMA plugin is not looked at";
    } else {
        PluginLoadReport report;
        std::unique_ptr<PluginLibrary> lib = PluginLibrary::open("rdma", config, &report);
        std::printf("RDMA plugin search, in order:\n");
        for (const auto &d : report.search_dirs) std::printf("  %s\n", d.c_str());
        std::printf("files tried:\n");
        for (const auto &a : report.attempts) std::printf("  %s: %s\n", a.path.c_str(), a.result.c_str());
        if (lib) {
            std::printf("plugin: %s, ABI %u.%u, version %s\n", report.path.c_str(), report.abi_major,
                        report.abi_minor, report.plugin_version.c_str());
            std::string probe = lib->probe(config);
            if (!probe.empty()) {
                std::printf("devices (from the plugin's probe):\n");
                print_indented(probe);
            }
            std::string refusal;
            std::unique_ptr<Transport> t;
            try {
                t = Transport::from_plugin(std::move(lib), config, &refusal);
            } catch (const ConfigError &e) {
                refusal = e.what();
            }
            if (t) {
                verdict = "rdma";
                why = "the RDMA plugin loaded and initialised";
                std::string described = t->describe();
                if (!described.empty()) {
                    std::printf("in use:\n");
                    print_indented(described);
                }
            } else {
                why = "RDMA plugin refused: " + refusal;
            }
        } else {
            why = "RDMA plugin not loaded: " + report.reason;
        }
        if (verdict.empty()) {
            if (config.transport() == "rdma") {
                verdict = "none";
                can_start = false;
            } else {
                verdict = "tcp";
            }
        }
    }
    std::printf("\n%s\n", memlock_report().c_str());
    std::printf("\ntransport: %s\nreason: %s\n", verdict.c_str(), why.c_str());
    if (!can_start) std::printf("a program with transport = rdma would refuse to start here\n");
    return can_start ? 0 : 1;
}
