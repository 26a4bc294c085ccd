// SPDX-License-Identifier: MIT
// twinwire-conformance: the conformance cases against any plugin, by file
// or by name, with no code from the plugin's author.  Installed.
//
//   twinwire-conformance [options] PLUGIN [catch2 options and case filters]
//
// PLUGIN is a file (anything with a '/': twinwire-foo-abi1.so) or a name
// looked up like the framework does (twinwire-NAME-abiN.so on the plugin
// search path).  Prints one line per case (PASS, FAIL or SKIP and why) and
// exits 0 when no case failed, 1 when one did, 2 when the plugin cannot be
// loaded or the command line is wrong.
#include "addresses.hpp"
#include "context.hpp"
#include "harness.hpp"

#include <twinwire/config.hpp>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace twinwire::conformance {
namespace {

const char kUsage[] = "usage: twinwire-conformance [options] PLUGIN [catch2 options] [case filters]\n"
                      "  PLUGIN                a plugin file (path with a '/') or a transport name\n"
                      "  --address IP          address servers listen on and clients reach (default 127.0.0.1)\n"
                      "  --address6 IP         IPv6 address for TW_CAP_IPV6 transports (default ::1)\n"
                      "  --source IP           local address clients bind before connecting (default none)\n"
                      "  --silent-address IP   an address that never answers, for the connect-timeout case\n"
                      "                        (default none: that case is skipped)\n"
                      "  --set KEY=VALUE       a configuration value for the transport (repeatable)\n"
                      "  --plugin-path DIR     where to look for PLUGIN by name (like plugin_path)\n"
                      "  --wait-ms N           how long a case waits for what should happen (default 60000;\n"
                      "                        a TSan build waits 4 times as long, an ASan build twice)\n"
                      "  -h, --help            this text; catch2 options: --list-tests, -s, \"[tag]\", \"case name\"\n";

struct Options {
    std::string plugin;
    std::string address = "127.0.0.1";
    std::string address6 = "::1";
    std::string source;
    std::string silent;
    Config config;
    std::vector<char *> catch_args;
};

class PluginContext : public TransportContext {
public:
    explicit PluginContext(const Options &o) : o_(o) {}
    std::string name() const override { return name_.empty() ? o_.plugin : name_; }
    sockaddr_storage server_address() const override { return make_address(o_.address); }
    std::optional<sockaddr_storage> server_address_v6() const override { return make_address(o_.address6); }
    std::optional<sockaddr_storage> client_source() const override
    {
        if (o_.source.empty()) return std::nullopt;
        return make_address(o_.source);
    }
    std::optional<sockaddr_storage> silent_address(std::string *why) const override
    {
        if (!o_.silent.empty()) return make_address(o_.silent, 9);
        *why = "give one with --silent-address";
        return std::nullopt;
    }
    std::unique_ptr<Transport> create_transport(std::string *why) override
    {
        PluginLoadReport report;
        std::unique_ptr<PluginLibrary> library;
        if (o_.plugin.find('/') != std::string::npos) {
            char resolved[PATH_MAX];
            if (!realpath(o_.plugin.c_str(), resolved)) {
                *why = o_.plugin + ": " + strerror(errno);
                return nullptr;
            }
            library = PluginLibrary::open_file(resolved, &report);
        } else {
            library = PluginLibrary::open(o_.plugin, o_.config, &report);
        }
        if (!library) {
            *why = "loading " + o_.plugin + ": " + report.reason;
            for (const auto &a : report.attempts) *why += "\n  tried " + a.path + ": " + a.result;
            return nullptr;
        }
        name_ = library->info().name ? library->info().name : "";
        path_ = library->path();
        return Transport::from_plugin(std::move(library), o_.config, why);
    }
    const std::string &path() const { return path_; }
    Config runtime_config() const override
    {
        Config config = o_.config;
        config.set("transport", name());
        // A plugin given as a file: that file first, then where the others
        // are (a wrapping plugin such as fault loads its inner one by name).
        if (o_.plugin.find('/') != std::string::npos && !path_.empty() && config.plugin_path().empty()) {
            const char *others = env_or_null("TWINWIRE_PLUGIN_PATH");
            config.set("plugin_path", others ? path_ + ":" + others : path_);
        }
        return config;
    }

private:
    const Options &o_;
    std::string name_;
    std::string path_;
};

bool take_value(int argc, char **argv, int &i, const char *flag, std::string *out)
{
    if (strcmp(argv[i], flag) != 0) return false;
    if (i + 1 >= argc) {
        fprintf(stderr, "twinwire-conformance: %s needs a value\n%s", flag, kUsage);
        exit(2);
    }
    *out = argv[++i];
    return true;
}

Options parse(int argc, char **argv)
{
    Options o;
    o.catch_args.push_back(argv[0]);
    std::string value;
    int i = 1;
    for (; i < argc && o.plugin.empty(); i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(kUsage, stdout);
            exit(0);
        }
        if (take_value(argc, argv, i, "--address", &o.address) ||
            take_value(argc, argv, i, "--address6", &o.address6) || take_value(argc, argv, i, "--source", &o.source) ||
            take_value(argc, argv, i, "--silent-address", &o.silent))
            continue;
        if (take_value(argc, argv, i, "--plugin-path", &value)) {
            char resolved[PATH_MAX];
            o.config.set("plugin_path", realpath(value.c_str(), resolved) ? resolved : value, "--plugin-path");
            continue;
        }
        if (take_value(argc, argv, i, "--wait-ms", &value)) {
            char *end = nullptr;
            long long ms = strtoll(value.c_str(), &end, 10);
            if (value.empty() || *end || ms <= 0) {
                fprintf(stderr, "twinwire-conformance: --wait-ms wants a positive number, not '%s'\n", value.c_str());
                exit(2);
            }
            set_wait_limit(std::chrono::milliseconds(ms));
            continue;
        }
        if (take_value(argc, argv, i, "--set", &value)) {
            size_t eq = value.find('=');
            if (eq == std::string::npos || eq == 0) {
                fprintf(stderr, "twinwire-conformance: --set wants KEY=VALUE, not '%s'\n", value.c_str());
                exit(2);
            }
            std::string key = value.substr(0, eq);
            // A transport's own keys ("NAME.key") are kept by Config for it to check.
            try {
                o.config.set(key, value.substr(eq + 1), "--set");
            } catch (const std::exception &e) {
                fprintf(stderr, "twinwire-conformance: %s\n", e.what());
                exit(2);
            }
            continue;
        }
        if (argv[i][0] == '-') {
            fprintf(stderr, "twinwire-conformance: unknown option '%s' before PLUGIN\n%s", argv[i], kUsage);
            exit(2);
        }
        o.plugin = argv[i];
    }
    if (o.plugin.empty()) {
        fputs(kUsage, stderr);
        exit(2);
    }
    for (; i < argc; i++) o.catch_args.push_back(argv[i]);
    return o;
}

std::string caps_text(uint64_t caps)
{
    static const std::pair<uint64_t, const char *> names[] = {{TW_CAP_ZERO_COPY_SEND, "ZERO_COPY_SEND"},
                                                              {TW_CAP_ZERO_COPY_RECV, "ZERO_COPY_RECV"},
                                                              {TW_CAP_IPV6, "IPV6"},
                                                              {TW_CAP_HALF_CLOSE, "HALF_CLOSE"},
                                                              {TW_CAP_PENDING_DATA, "PENDING_DATA"},
                                                              {TW_CAP_KERNEL_BYPASS, "KERNEL_BYPASS"},
                                                              {TW_CAP_BUSY_POLL, "BUSY_POLL"},
                                                              {TW_CAP_RMA, "RMA"}};
    std::string out;
    for (const auto &[bit, name] : names)
        if (caps & bit) out += (out.empty() ? "" : " ") + std::string(name);
    return out.empty() ? "none" : out;
}

} // namespace
} // namespace twinwire::conformance

int main(int argc, char **argv)
{
    using namespace twinwire::conformance;
    Options options = parse(argc, argv);
    PluginContext context(options);
    set_context(&context);
    try {
        twinwire::Transport &t = transport(); // load and init once, up front
        printf("plugin %s (%s), caps: %s\n", t.name().c_str(), context.path().c_str(), caps_text(t.caps()).c_str());
    } catch (const std::exception &e) {
        fprintf(stderr, "twinwire-conformance: %s\n", e.what());
        return 2;
    }
    int failed = run_cases(static_cast<int>(options.catch_args.size()), options.catch_args.data(), context);
    return failed == 0 ? 0 : 1;
}
