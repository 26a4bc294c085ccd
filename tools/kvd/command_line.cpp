// SPDX-License-Identifier: MIT
#include "command_line.hpp"

#include <twinwire/abi.h>
#include <twinwire/transport.hpp>

#include <CLI/CLI.hpp>

#include <cctype>
#include <climits>
#include <unistd.h>

namespace kvd {
namespace {

// The options that set one configuration key each, in command-line order
// with --set (the last one wins), so each is applied when CLI11 reads it.
struct Option {
    const char *name;
    const char *key;  ///< the configuration key it sets
    const char *type; ///< the value's name in --help
    const char *help;
    bool path; ///< a relative path is made absolute (the daemon changes to /)
};

const Option kOptions[] = {
    {"--port", "listen_port", "N", "listen_port", false},
    {"--bind", "listen_address", "ADDRESS", "listen_address", false},
    {"--transport", "transport", "T", "transport: auto, tcp, a plugin's name, or a list (foo,tcp)", false},
    {"--threads", "threads", "N", "event-loop threads", false},
    {"--maxclients", "kvd.maxclients", "N", "kvd.maxclients", false},
    {"--log-level", "log_level", "LEVEL", "error, warn, info, debug or trace", false},
    {"--log-file", "log_file", "FILE", "log_file (SIGHUP reopens it)", true},
    {"--pidfile", "kvd.pidfile", "FILE", "kvd.pidfile", true},
};

std::string absolute(const std::string &path)
{
    if (path.empty() || path[0] == '/') return path;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return path;
    return std::string(cwd) + "/" + path;
}

// Defines every option on `app`; parsing fills `cl`.  --help's option list
// comes from here too.
void define_options(CLI::App &app, CommandLine &cl)
{
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.allow_extras(); // named below as "unknown argument", not as CLI11's "not expected" list
    app.add_option("-c,--config", cl.config_file, "read this configuration file (INI: key = value, [kvd] section)")
        ->type_name("FILE");
    for (const Option &o : kOptions)
        app.add_option_function<std::string>(
               o.name,
               [&cl, &o](const std::string &v) {
                   cl.overrides.push_back({o.key, o.path ? absolute(v) : v, std::string("command line ") + o.name});
               },
               o.help)
            ->type_name(o.type)
            ->trigger_on_parse();
    app.add_flag("--daemonize", "kvd.daemonize = yes: detach; the exit status says whether it started")
        ->trigger_on_parse()
        ->each([&cl](const std::string &v) { // "true", or the value of --daemonize=no
            cl.overrides.push_back({"kvd.daemonize", v == "true" ? "yes" : v, "command line --daemonize"});
        });
    app.add_option_function<std::string>(
           "--set",
           [&cl](const std::string &kv) {
               auto eq = kv.find('=');
               if (eq == std::string::npos || eq == 0) throw UsageError("--set needs KEY=VALUE, got '" + kv + "'");
               cl.overrides.push_back({kv.substr(0, eq), kv.substr(eq + 1), "command line --set"});
           },
           "set any configuration key")
        ->type_name("KEY=VALUE")
        ->trigger_on_parse();
    app.add_flag("--check-config", cl.check_config,
                 "validate the configuration, print it with origins, exit 0 (good) or 1");
    app.add_flag("--version", cl.version, "print the version");
}

/// "-x", "--name": not "-" (a file name by convention) nor a negative number.
bool looks_like_option(const std::string &arg)
{
    return arg.size() >= 2 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1])) && arg[1] != '.';
}

// CLI11 takes the argument after an option that needs a value as that value
// even when it is another option: `--pidfile --check-config` would name the
// pidfile "--check-config" and start the daemon instead of checking.  A value
// that looks like an option is meant only in the --name=VALUE form.
void refuse_options_as_values(const CLI::App &app, int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") return;
        if (!looks_like_option(arg) || arg.find('=') != std::string::npos) continue;
        const CLI::Option *opt = app.get_option_no_throw(arg);
        if (!opt || opt->get_items_expected_min() == 0) continue; // unknown (reported later) or a flag
        const std::string next = argv[i + 1];
        if (looks_like_option(next))
            throw UsageError(arg + " needs a value, but the next argument '" + next +
                             "' is an option (for a value that starts with '-', write " + opt->get_name() + "=VALUE)");
        ++i; // its value
    }
}

} // namespace

CommandLine parse_command_line(int argc, char **argv)
{
    CommandLine cl;
    CLI::App app;
    define_options(app, cl);
    refuse_options_as_values(app, argc, argv);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &) {
        cl.help = true; // printed once the configuration says where the plugins are
        return cl;
    } catch (const CLI::ParseError &e) {
        throw UsageError(e.what());
    }
    if (!app.remaining().empty()) throw UsageError("unknown argument '" + app.remaining().front() + "'");
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
    CommandLine unused;
    CLI::App app("An in-memory key-value daemon speaking the Redis protocol (RESP2) over twinwire:\n"
                 "RDMA when it is usable, TCP otherwise. redis-cli and redis-benchmark work with it.\n"
                 "\n"
                 "With no options it serves on 127.0.0.1 port " +
                     config.get("listen_port") + " (not Redis' 6379), transport " + config.get("transport") + ".\n",
                 "twinwire-kvd");
    define_options(app, unused);
    std::string text = "Precedence: defaults < config file < TWINWIRE_<KEY> environment variables\n"
                       "(TWINWIRE_TRANSPORT=tcp, TWINWIRE_KVD_MAXCLIENTS=100) < command line (--set and the options\n"
                       "above in order: the last one wins).\n"
                       "SIGTERM or SIGINT: let clients flush, then exit 0.  SIGHUP: reopen the log file and read the\n"
                       "TLS certificate, key and CA files again.  SIGALRM, SIGPIPE: ignored.  SIGUSR1, SIGUSR2: end\n"
                       "the process (as redis-server).\n"
                       "\n"
                       "Configuration keys (default):\n";
    for (const twinwire::ConfigKey &k : config.schema()) {
        std::string line = "  " + k.name + " (" + (k.default_value.empty() ? "unset" : k.default_value) + ")";
        if (line.size() < 38) line.resize(38, ' ');
        else line += "\n" + std::string(38, ' ');
        text += line + k.help + "\n";
    }
    text += "\nTransport keys (checked by the transport, in every mode; tcp is built in, NAME is the plugin\n"
            "twinwire-NAME-abi" +
            std::to_string(TW_ABI_MAJOR) + ".so on the plugin path; see its documentation):\n";
    for (const char *name : {"tcp", "rdma"}) {
        std::vector<std::string> keys = twinwire::transport_keys(name, config);
        std::string line;
        for (const auto &k : keys) line += (line.empty() ? "" : ", ") + k;
        text += "  " + std::string(name) + ".*: " +
                (line.empty() ? std::string("(the plugin is not found here, or does not list its keys)") : line) + "\n";
    }
    text += "  NAME.*: the keys of a plugin NAME named in transport";
    app.footer(text);
    return app.help();
}

std::string effective_config_text(const twinwire::Config &config)
{
    std::string text;
    for (const auto &entry : config.entries())
        text += entry.first + " = " + entry.second.value + "    # " + entry.second.origin + "\n";
    return text;
}

} // namespace kvd
