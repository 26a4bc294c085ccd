// SPDX-License-Identifier: MIT
// The plugin loader on real files: each broken plugin gives its own reason,
// `auto` falls back to TCP with one log line, `rdma` refuses to start.
#include "env_path.hpp"
#include "log_capture.hpp"

#include <twinwire/transport.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

using namespace twinwire;

namespace {

// The ABI this build speaks and a major it does not: the loader tests hold
// for any major (tests/run.sh runs them in a build with TW_ABI_MAJOR=2).
const std::string kMajor = std::to_string(TW_ABI_MAJOR);
const std::string kOther = std::to_string(TW_ABI_MAJOR + 1);
const std::string kMinor = std::to_string(TW_ABI_MINOR);

// A config that loads the plugin from exactly this path.
Config config_for(const std::string &path, const char *mode)
{
    Config c;
    c.set("plugin_path", path);
    c.set("transport", mode);
    return c;
}

struct Outcome {
    std::string auto_chosen;
    std::string auto_reason;
    size_t auto_log_lines;
    std::string rdma_error;
};

Outcome select_both_ways(const std::string &path)
{
    Outcome o;
    {
        LogCapture logs;
        TransportSelection sel = select_transports(config_for(path, "auto"));
        o.auto_chosen = sel.chosen;
        o.auto_reason = sel.reason;
        o.auto_log_lines = logs.from("transport").size();
    }
    try {
        (void)select_transports(config_for(path, "rdma"));
        o.rdma_error = "(no error)";
    } catch (const std::runtime_error &e) {
        o.rdma_error = e.what();
    }
    return o;
}

void check_falls_back_and_refuses(const std::string &path, const std::string &reason)
{
    Outcome o = select_both_ways(path);
    INFO("auto reason: " << o.auto_reason);
    INFO("rdma error: " << o.rdma_error);
    CHECK(o.auto_chosen == "tcp");
    CHECK(o.auto_reason.find(reason) != std::string::npos);
    CHECK(o.auto_reason.find("falling back to TCP") != std::string::npos);
    CHECK(o.auto_log_lines == 1);
    CHECK(o.rdma_error.find("transport = rdma") == 0);
    CHECK(o.rdma_error.find(reason) != std::string::npos);
}

struct TempFile {
    std::string path;
    explicit TempFile(const std::string &content)
    {
        char tmpl[] = "/tmp/twinwire-notelf-XXXXXX.so";
        int fd = mkstemps(tmpl, 3);
        REQUIRE(fd >= 0);
        close(fd);
        path = tmpl;
        std::ofstream(path) << content;
    }
    ~TempFile() { unlink(path.c_str()); }
};

} // namespace

TEST_CASE("a missing plugin file: reason says not found, auto falls back, rdma refuses", "[loader]")
{
    check_falls_back_and_refuses("/nonexistent/dir/twinwire-rdma-abi1.so", "not found");
}

TEST_CASE("a file that is not an ELF object: reason is the dlopen error", "[loader]")
{
    TempFile f(std::string(20, '#') + " this is a text file, not a shared object, long enough to hold an ELF header\n" +
               std::string(200, '-') + "\n");
    check_falls_back_and_refuses(f.path, "dlopen failed");
    check_falls_back_and_refuses(f.path, "invalid ELF header");
}

TEST_CASE("an ELF without the entry symbol: reason says it is not a twinwire plugin", "[loader]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_NO_ENTRY"),
                                 "does not export twinwire_plugin_entry_v" + kMajor + ": not a twinwire plugin");
}

TEST_CASE("a plugin built for another ABI major: reason names both versions", "[loader]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_V2_SYMBOL"), "exports twinwire_plugin_entry_v" + kOther +
                                                                           ": built for ABI " + kOther +
                                                                           ", this program speaks ABI " + kMajor);
}

TEST_CASE("a plugin whose info claims another ABI major is rejected", "[loader]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_INFO_ABI2"), "built for ABI " + kOther + "." + kMinor +
                                                                           ", this program speaks ABI " + kMajor + "." +
                                                                           kMinor);
}

TEST_CASE("a plugin missing a mandatory operation: reason names the operation", "[loader]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_NO_ACCEPT"), "missing required operation 'accept'");
}

TEST_CASE("a plugin claiming a capability without its operation: reason names both", "[loader]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_HALF_CLOSE_NO_SHUTDOWN"),
                                 "claims TW_CAP_HALF_CLOSE without the operation 'shutdown'");
}

TEST_CASE("a plugin claiming TW_CAP_RMA without rma_post is refused, naming the operation", "[loader][growth]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_RMA_NO_POST"),
                                 "claims TW_CAP_RMA without the operation 'rma_post'");
}

TEST_CASE("an operations table smaller than ABI 1.0's is refused, naming both sizes", "[loader][growth]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_SMALL_OPS"),
                                 "operations table is " + std::to_string(TW_TRANSPORT_OPS_SIZE_V1 - 8) +
                                     " bytes, smaller than the " + std::to_string(TW_TRANSPORT_OPS_SIZE_V1) +
                                     " bytes of ABI 1.0");
}

TEST_CASE("a plugin info smaller than ABI 1.0's is refused, naming both sizes", "[loader][growth]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_SMALL_INFO"),
                                 "plugin info is " + std::to_string(TW_PLUGIN_INFO_SIZE_V1 - 8) +
                                     " bytes, smaller than the " + std::to_string(TW_PLUGIN_INFO_SIZE_V1) +
                                     " bytes of ABI 1.0");
}

TEST_CASE("a plugin whose own dependency is missing: reason names the library", "[loader]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_NEEDS_GONE"), "libtw-test-gone-at-runtime.so.1");
}

TEST_CASE("a plugin whose init refuses: reason is the plugin's own", "[loader]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_INIT_REFUSES"),
                                 "RDMA plugin refused: test plugin: no device here (no usable device)");
}

TEST_CASE("a plugin that asks the host's transport_ops for its own name gets -ELOOP, no table and the reason",
          "[loader]")
{
    check_falls_back_and_refuses(env_path("TW_TEST_PLUGIN_WRAPS_ITSELF"),
                                 "transport_ops(own name) = -ELOOP, table NULL: transport 'rdma' cannot wrap itself");
}

TEST_CASE("a relative plugin path is never tried (no loading from the working directory)", "[loader]")
{
    PluginLoadReport report;
    CHECK(PluginLibrary::open_file("twinwire-rdma-abi1.so", &report) == nullptr);
    CHECK(report.reason.find("not an absolute path") != std::string::npos);
}

TEST_CASE("transport = tcp never touches the plugin", "[loader]")
{
    TransportSelection sel = select_transports(config_for("/nonexistent/twinwire-rdma-abi1.so", "tcp"));
    CHECK(sel.chosen == "tcp");
    CHECK(sel.reports.empty());
    CHECK(sel.plugins.empty());
    CHECK(sel.in_use_names() == "tcp");
}

TEST_CASE("a real plugin loads, passes the ABI checks and initialises", "[loader]")
{
    const std::string path = env_path("TW_TEST_TCP_MODULE");
    PluginLoadReport report;
    auto lib = PluginLibrary::open_file(path, &report);
    REQUIRE(lib);
    CHECK(report.loaded);
    CHECK(report.abi_major == TW_ABI_MAJOR);
    CHECK(std::string(lib->info().name) == "tcp");
    // Every optional member is filled, so call sites never test for NULL.
    CHECK(lib->ops().ctrl != nullptr);
    CHECK(lib->ops().probe != nullptr);
    Config config;
    std::string why;
    auto t = Transport::from_plugin(std::move(lib), config, &why);
    REQUIRE(t);
    CHECK(why.empty());
    CHECK(t->name() == "tcp");

    // Selected by a name it does not declare, it is refused: a file serves
    // its own transport only.
    CHECK_THROWS_WITH(select_transports(config_for(path, "rdma")),
                      Catch::Contains("it is the plugin of transport 'tcp', not 'rdma'"));
}

TEST_CASE("without plugin_path the installed directory is the one place looked at, never the build tree", "[loader]")
{
    unsetenv("TWINWIRE_PLUGIN_PATH");
    Config config;
    PluginLoadReport report;
    CHECK(PluginLibrary::open("rdma-test-absent", config, &report) == nullptr);
    REQUIRE(report.search_dirs.size() == 1);
    CHECK(report.search_dirs[0].find("(installed plugin directory)") != std::string::npos);
    REQUIRE(report.attempts.size() == 1);
    CHECK(report.attempts[0].path.find("/twinwire-rdma-test-absent-abi" + kMajor + ".so") != std::string::npos);
    CHECK(report.reason.find("twinwire-rdma-test-absent-abi" + kMajor + ".so not found") == 0);
}

TEST_CASE("a relative entry in TWINWIRE_PLUGIN_PATH is refused, with no fallback to another place", "[loader]")
{
    setenv("TWINWIRE_PLUGIN_PATH", "relative/dir", 1);
    Config config;
    PluginLoadReport report;
    CHECK(PluginLibrary::open("rdma-test-absent", config, &report) == nullptr);
    unsetenv("TWINWIRE_PLUGIN_PATH");
    CHECK(report.attempts.empty());
    REQUIRE(report.search_dirs.size() == 1);
    CHECK(report.search_dirs[0] == "'relative/dir' (environment TWINWIRE_PLUGIN_PATH) ignored: not an absolute path");
    CHECK(report.reason.find("not found (looked for 'relative/dir'") != std::string::npos);
}

TEST_CASE("an explicit plugin_path is the only place looked at", "[loader]")
{
    setenv("TWINWIRE_PLUGIN_PATH", env_path("TW_TEST_TCP_MODULE").c_str(), 1);
    Config config;
    config.set("plugin_path", "/nonexistent/chosen.so");
    PluginLoadReport report;
    CHECK(PluginLibrary::open("rdma", config, &report) == nullptr);
    unsetenv("TWINWIRE_PLUGIN_PATH");
    REQUIRE(report.attempts.size() == 1);
    CHECK(report.attempts[0].path == "/nonexistent/chosen.so");
}

TEST_CASE("an unread key under the plugin's prefix is a configuration error", "[loader]")
{
    const std::string path = env_path("TW_TEST_TCP_MODULE");
    Config config;
    config.set("tcp.no_such_setting", "1");
    PluginLoadReport report;
    auto lib = PluginLibrary::open_file(path, &report);
    REQUIRE(lib);
    std::string why;
    CHECK_THROWS_WITH(Transport::from_plugin(std::move(lib), config, &why),
                      Catch::Contains("unknown key(s) for the tcp transport: tcp.no_such_setting (api)"));
}

TEST_CASE("an unread key under the built-in TCP backend's prefix is a configuration error", "[loader]")
{
    Config config;
    config.set("tcp.nodelya", "yes");
    CHECK_THROWS_WITH(Transport::builtin_tcp(config), Catch::Contains("tcp.nodelya (api)"));
}

TEST_CASE("a bad value for a transport key stops start-up even in auto mode", "[loader]")
{
    Config config;
    config.set("tcp.linger_ms", "soon");
    CHECK_THROWS_AS(Transport::builtin_tcp(config), ConfigError);
    CHECK_THROWS_WITH(Transport::builtin_tcp(config), Catch::Contains("tcp.linger_ms") && Catch::Contains("soon"));
}
