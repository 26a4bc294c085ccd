// SPDX-License-Identifier: MIT
#include "command_line.hpp"

#include <twinwire/abi.h>
#include <twinwire/transport.hpp>

#include <climits>
#include <cstdlib>
#include <unistd.h>

namespace kvd {
namespace {

struct Option {
    const char *name;
    const char *key;     ///< config key it sets; nullptr for the special ones
    const char *value;   ///< fixed value (flags), nullptr: takes an argument
    bool path;           ///< a relative path is made absolute (the daemon changes to /)
};

const Option kOptions[] = {
    {"--port", "listen_port", nullptr, false},
    {"--bind", "listen_address", nullptr, false},
    {"--transport", "transport", nullptr, false},
    {"--threads", "threads", nullptr, false},
    {"--maxclients", "kvd.maxclients", nullptr, false},
    {"--log-level", "log_level", nullptr, false},
    {"--log-file", "log_file", nullptr, true},
    {"--pidfile", "kvd.pidfile", nullptr, true},
    {"--daemonize", "kvd.daemonize", "yes", false},
};

std::string absolute(const std::string &path)
{
    if (path.empty() || path[0] == '/') return path;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return path;
    return std::string(cwd) + "/" + path;
}

} // namespace

CommandLine parse_command_line(int argc, char **argv)
{
    CommandLine cl;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        bool inline_value = false;
        if (arg.compare(0, 2, "--") == 0) {
            auto eq = arg.find('=');
            if (eq != std::string::npos) {
                value = arg.substr(eq + 1);
                arg = arg.substr(0, eq);
                inline_value = true;
            }
        }
        auto take_value = [&]() -> std::string {
            if (inline_value) return value;
            if (i + 1 >= argc) throw UsageError(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h") {
            cl.help = true;
        } else if (arg == "--version") {
            cl.version = true;
        } else if (arg == "--check-config") {
            cl.check_config = true;
        } else if (arg == "--config" || arg == "-c") {
            cl.config_file = take_value();
        } else if (arg == "--set") {
            std::string kv = take_value();
            auto eq = kv.find('=');
            if (eq == std::string::npos || eq == 0) throw UsageError("--set needs KEY=VALUE, got '" + kv + "'");
            cl.overrides.push_back({kv.substr(0, eq), kv.substr(eq + 1), "command line --set"});
        } else {
            const Option *opt = nullptr;
            for (const Option &o : kOptions)
                if (arg == o.name) opt = &o;
            if (!opt) throw UsageError("unknown argument '" + arg + "'");
            std::string v;
            if (opt->value) {
                if (inline_value) throw UsageError(arg + " takes no value");
                v = opt->value;
            } else {
                v = take_value();
            }
            if (opt->path) v = absolute(v);
            cl.overrides.push_back({opt->key, v, std::string("command line ") + opt->name});
        }
    }
    return cl;
}

void load_config(twinwire::Config &config, const CommandLine &cl)
{
    if (!cl.config_file.empty()) config.load_file(cl.config_file);
    config.load_environment();
    for (const auto &o : cl.overrides) config.set(o.key, o.value, o.origin);
}

std::string usage_text(const twinwire::Config &config)
{
    std::string text =
        "Usage: twinwire-kvd [OPTIONS]\n"
        "An in-memory key-value daemon speaking the Redis protocol (RESP2) over twinwire:\n"
        "RDMA when it is usable, TCP otherwise. redis-cli and redis-benchmark work with it.\n"
        "\n"
        "With no options it serves on 127.0.0.1 port " +
        config.get("listen_port") +
        " (not Redis' 6379), transport " + config.get("transport") +
        ".\n"
        "\n"
        "Options:\n"
        "  -c, --config FILE    read this configuration file (INI: key = value, [kvd] section)\n"
        "  --port N             listen_port\n"
        "  --bind ADDRESS       listen_address\n"
        "  --transport T        transport: auto, tcp, a plugin's name, or a list (foo,tcp)\n"
        "  --threads N          event-loop threads\n"
        "  --maxclients N       kvd.maxclients\n"
        "  --log-level LEVEL    error, warn, info, debug or trace\n"
        "  --log-file FILE      log_file (SIGHUP reopens it)\n"
        "  --pidfile FILE       kvd.pidfile\n"
        "  --daemonize          kvd.daemonize = yes: detach; the exit status says whether it started\n"
        "  --set KEY=VALUE      set any configuration key\n"
        "  --check-config       validate the configuration, print it with origins, exit 0 (good) or 1\n"
        "  --version            print the version\n"
        "  -h, --help           this text\n"
        "\n"
        "Precedence: defaults < config file < TWINWIRE_<KEY> environment variables\n"
        "(TWINWIRE_TRANSPORT=tcp, TWINWIRE_KVD_MAXCLIENTS=100) < command line.\n"
        "SIGTERM or SIGINT: let clients flush, then exit 0.  SIGHUP: reopen the log file.\n"
        "\n"
        "Configuration keys (default):\n";
    for (const twinwire::ConfigKey &k : config.schema()) {
        std::string line = "  " + k.name + " (" + (k.default_value.empty() ? "unset" : k.default_value) + ")";
        if (line.size() < 38) line.resize(38, ' ');
        else line += "\n" + std::string(38, ' ');
        text += line + k.help + "\n";
    }
    text += "\nTransport keys (checked by the transport, in every mode; tcp is built in, NAME is the plugin\n"
            "twinwire-NAME-abi" + std::to_string(TW_ABI_MAJOR) + ".so on the plugin path; see its documentation):\n";
    for (const char *name : {"tcp", "rdma"}) {
        std::vector<std::string> keys = twinwire::transport_keys(name, config);
        std::string line;
        for (const auto &k : keys) line += (line.empty() ? "" : ", ") + k;
        text += "  " + std::string(name) + ".*: " +
                (line.empty() ? std::string("(the plugin is not found here, or does not list its keys)") : line) +
                "\n";
    }
    text += "  NAME.*: the keys of a plugin NAME named in transport\n";
    return text;
}

std::string effective_config_text(const twinwire::Config &config)
{
    std::string text;
    for (const auto &entry : config.entries())
        text += entry.first + " = " + entry.second.value + "    # " + entry.second.origin + "\n";
    return text;
}

} // namespace kvd
