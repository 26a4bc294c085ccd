// SPDX-License-Identifier: MIT
// twinwire-info: which transport this host would use, and why, and every
// plugin installed on the search path.  Like ibv_devinfo / fi_info /
// ucx_info -d, but answers the question a deployer asks first.
#include "daemon_status.hpp"
#include "json_text.hpp"
#include "memlock_report.hpp"

#include <twinwire/log.hpp>
#include <twinwire/transport.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>
#include <string>

using namespace twinwire;

namespace {

// What the command line asked for.
struct Options {
    std::optional<std::string> config_file, transport, plugin_path, status;
    bool json = false, verbose = false;
};

// CLI11 parses; the --help text comes from these definitions.
CLI::App &define_options(CLI::App &app, Options &o)
{
    app.description(
        "Lists every plugin file on the plugin search path (name, ABI, version, capabilities, whether it\n"
        "loads and why not), then says which transport a twinwire program started here would use and\n"
        "why: the search for each plugin the configuration names, its devices and ports, RLIMIT_MEMLOCK.\n");
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.set_version_flag("--version", "twinwire-info " TW_PROJECT_VERSION " (ABI " + std::to_string(TW_ABI_MAJOR) +
                                          "." + std::to_string(TW_ABI_MINOR) + ")");
    app.add_option("--config", o.config_file, "read this configuration file (as a daemon does)")->type_name("FILE");
    app.add_option("--transport", o.transport, "transport: auto, tcp, NAME or NAME,NAME,...")->type_name("T");
    app.add_option("--plugin", o.plugin_path, "plugin_path: directories or .so files, ':' between them")
        ->type_name("PATH");
    app.add_option("--status", o.status,
                   "ask the program running with status_socket = PATH (or the configuration's) for its "
                   "transports, listening addresses and open connections")
        ->type_name("[PATH]")
        ->expected(0, 1);
    app.add_flag("--json", o.json, "print the same as one JSON document");
    app.add_flag("-v,--verbose", o.verbose, "log at debug level while looking");
    app.footer("Settings come from FILE, then TWINWIRE_* variables, then --transport and --plugin, as in a daemon.\n"
               "Exit status: 0 when the configured transport can start, 1 when it cannot (a transport named\n"
               "alone, or every one of a list, is unusable, or the configuration is wrong), 2 on usage.\n"
               "With --status: 0 when the program answered, 1 when nothing answers there.");
    return app;
}

std::vector<std::string> caps_names(uint64_t caps)
{
    static const std::pair<uint64_t, const char *> known[] = {
        {TW_CAP_ZERO_COPY_SEND, "zero-copy-send"},
        {TW_CAP_ZERO_COPY_RECV, "zero-copy-recv"},
        {TW_CAP_IPV6, "ipv6"},
        {TW_CAP_HALF_CLOSE, "half-close"},
        {TW_CAP_PENDING_DATA, "pending-data"},
        {TW_CAP_KERNEL_BYPASS, "kernel-bypass"},
        {TW_CAP_BUSY_POLL, "busy-poll"},
        {TW_CAP_RMA, "rma"},
    };
    std::vector<std::string> names;
    for (const auto &k : known)
        if (caps & k.first) names.push_back(k.second);
    return names;
}

std::string join(const std::vector<std::string> &items, const char *sep)
{
    std::string out;
    for (const auto &i : items) out += (out.empty() ? "" : sep) + i;
    return out;
}

// What selecting the configured transports gives here.
struct Verdict {
    bool can_start = true;
    std::string transport; ///< the first in use, or "none"
    std::vector<std::string> in_use;
    std::string reason;
    std::vector<std::pair<std::string, std::string>> described; ///< each plugin in use: name, describe()
};

Verdict decide(const Config &config)
{
    Verdict v;
    try {
        TransportSelection sel = select_transports(config);
        v.transport = sel.chosen;
        for (const Transport *t : sel.in_use) v.in_use.push_back(t->name());
        v.reason = sel.reason;
        for (const auto &p : sel.plugins)
            if (!p->describe().empty()) v.described.emplace_back(p->name(), p->describe());
    } catch (const ConfigError &e) {
        v = {false, "none", {}, std::string("configuration error: ") + e.what(), {}};
    } catch (const std::exception &e) {
        v = {false, "none", {}, e.what(), {}};
    }
    return v;
}

// The search for one plugin the configuration names, and its probe (no init).
struct PluginSearch {
    std::string name;
    PluginLoadReport report;
    bool loaded = false;
    std::vector<std::string> probe; ///< the plugin's probe text, one entry per line
};

std::vector<std::string> lines_of(const std::string &text)
{
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

// The plugins the configuration names (auto: rdma), tcp excluded.
std::vector<PluginSearch> search_plugins(const Config &config)
{
    std::vector<std::string> names = config.transport_list();
    if (names.size() == 1 && names[0] == "auto") names = {"rdma"};
    std::vector<PluginSearch> out;
    for (const auto &name : names) {
        if (name == "tcp") continue;
        PluginSearch s;
        s.name = name;
        std::unique_ptr<PluginLibrary> lib = PluginLibrary::open(name, config, &s.report);
        s.loaded = lib != nullptr;
        if (lib) s.probe = lines_of(lib->probe(config));
        out.push_back(std::move(s));
    }
    return out;
}

void print_plugin_search(const PluginSearch &s)
{
    std::printf("%s plugin search, in order:\n", s.name == "rdma" ? "RDMA" : s.name.c_str());
    for (const auto &d : s.report.search_dirs) std::printf("  %s\n", d.c_str());
    std::printf("files tried:\n");
    for (const auto &a : s.report.attempts) std::printf("  %s: %s\n", a.path.c_str(), a.result.c_str());
    if (!s.loaded) return;
    std::printf("plugin: %s, ABI %u.%u, version %s\n", s.report.path.c_str(), s.report.abi_major, s.report.abi_minor,
                s.report.plugin_version.c_str());
    if (!s.probe.empty()) {
        std::printf("devices (from the plugin's probe):\n");
        for (const auto &line : s.probe) std::printf("  %s\n", line.c_str());
    }
}

void print_text(const Config &config, const std::vector<std::string> &places,
                const std::vector<PluginFileReport> &files, const std::vector<PluginSearch> &searches, const Verdict &v)
{
    const ConfigValue *mode = config.find("transport");
    std::printf("twinwire ABI %d.%d\n", TW_ABI_MAJOR, TW_ABI_MINOR);
    std::printf("transport setting: %s (%s)\n\n", mode->value.c_str(), mode->origin.c_str());
    std::printf("plugin search path:\n");
    for (const auto &p : places) std::printf("  %s\n", p.c_str());
    std::printf("plugins found:%s\n", files.empty() ? " none" : "");
    for (const auto &f : files) {
        if (f.loaded)
            std::printf("  %s: ABI %u.%u, version %s, caps %s: loads\n    %s\n    %s\n", f.name.c_str(), f.abi_major,
                        f.abi_minor, f.plugin_version.c_str(), f.caps ? join(caps_names(f.caps), ",").c_str() : "none",
                        f.path.c_str(), f.description.c_str());
        else std::printf("  %s: does not load: %s\n    %s\n", f.name.c_str(), f.why_not.c_str(), f.path.c_str());
    }
    std::printf("\n");

    for (const PluginSearch &s : searches) print_plugin_search(s);
    if (searches.empty()) std::printf("transport = tcp: plugins are not looked at\n");
    for (const auto &d : v.described) {
        std::printf("in use (%s):\n", d.first.c_str());
        for (const auto &line : lines_of(d.second)) std::printf("  %s\n", line.c_str());
    }
    std::printf("\n%s\n", memlock_report().c_str());
    std::printf("\ntransport: %s\n", v.transport.c_str());
    if (v.in_use.size() > 1) std::printf("in use, in order: %s\n", join(v.in_use, ", ").c_str());
    std::printf("reason: %s\n", v.reason.c_str());
    if (!v.can_start)
        std::printf("a program with transport = %s would refuse to start here\n", config.transport().c_str());
}

void print_json(const Config &config, const std::vector<std::string> &places,
                const std::vector<PluginFileReport> &files, const std::vector<PluginSearch> &searches, const Verdict &v)
{
    const ConfigValue *mode = config.find("transport");
    std::printf("{\n  \"version\": %s,\n  \"abi\": \"%d.%d\",\n", json_string(TW_PROJECT_VERSION).c_str(), TW_ABI_MAJOR,
                TW_ABI_MINOR);
    std::printf("  \"transport_setting\": {\"value\": %s, \"origin\": %s},\n", json_string(mode->value).c_str(),
                json_string(mode->origin).c_str());
    std::printf("  \"search_path\": %s,\n  \"plugins\": [", json_list(places).c_str());
    for (size_t i = 0; i < files.size(); ++i) {
        const PluginFileReport &f = files[i];
        std::printf("%s\n    {\"name\": %s, \"path\": %s, \"loads\": %s", i ? "," : "", json_string(f.name).c_str(),
                    json_string(f.path).c_str(), f.loaded ? "true" : "false");
        if (f.loaded)
            std::printf(", \"abi\": \"%u.%u\", \"version\": %s, \"caps\": %s, \"description\": %s}", f.abi_major,
                        f.abi_minor, json_string(f.plugin_version).c_str(), json_list(caps_names(f.caps)).c_str(),
                        json_string(f.description).c_str());
        else std::printf(", \"why_not\": %s}", json_string(f.why_not).c_str());
    }
    std::printf("%s],\n", files.empty() ? "" : "\n  ");
    std::printf("  \"searches\": [");
    for (size_t i = 0; i < searches.size(); ++i) {
        const PluginSearch &s = searches[i];
        std::vector<std::string> tried;
        for (const auto &a : s.report.attempts) tried.push_back(a.path + ": " + a.result);
        std::printf("%s\n    {\"name\": %s, \"search_path\": %s, \"files_tried\": %s, \"loads\": %s, \"probe\": %s}",
                    i ? "," : "", json_string(s.name).c_str(), json_list(s.report.search_dirs).c_str(),
                    json_list(tried).c_str(), s.loaded ? "true" : "false", json_list(s.probe).c_str());
    }
    std::printf("%s],\n", searches.empty() ? "" : "\n  ");
    std::printf("  \"in_use_describe\": {");
    for (size_t i = 0; i < v.described.size(); ++i)
        std::printf("%s%s: %s", i ? ", " : "", json_string(v.described[i].first).c_str(),
                    json_list(lines_of(v.described[i].second)).c_str());
    std::printf("},\n");
    std::printf("  \"transport\": %s,\n  \"in_use\": %s,\n  \"reason\": %s,\n  \"can_start\": %s,\n",
                json_string(v.transport).c_str(), json_list(v.in_use).c_str(), json_string(v.reason).c_str(),
                v.can_start ? "true" : "false");
    std::printf("  \"memlock\": %s\n}\n", json_string(memlock_report()).c_str());
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app("", "twinwire-info");
    Options o;
    try {
        define_options(app, o).parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        if (e.get_exit_code() == 0) return app.exit(e); // --help, --version
        std::fprintf(stderr, "twinwire-info: %s\n(see twinwire-info --help)\n", e.what());
        return 2;
    }
    Config config;
    try {
        if (o.config_file) config.load_file(*o.config_file);
        config.load_environment();
        if (o.transport) config.set("transport", *o.transport, "--transport");
        if (o.plugin_path) config.set("plugin_path", *o.plugin_path, "--plugin");
    } catch (const ConfigError &e) {
        std::fprintf(stderr, "twinwire-info: %s\n", e.what());
        return 2;
    }
    log::set_level(o.verbose ? LogLevel::Debug : LogLevel::Error);
    if (o.status) {
        std::string path = o.status->empty() ? config.get("status_socket") : *o.status;
        if (path.empty()) {
            std::fprintf(stderr, "twinwire-info: --status needs a PATH, or a configuration that sets status_socket\n");
            return 2;
        }
        return print_daemon_status(path, o.json) ? 0 : 1;
    }

    std::vector<std::string> places;
    std::vector<PluginFileReport> files = list_plugin_files(config, &places);
    std::vector<PluginSearch> searches = search_plugins(config);
    Verdict v = decide(config);
    if (o.json) print_json(config, places, files, searches, v);
    else print_text(config, places, files, searches, v);
    return v.can_start ? 0 : 1;
}
