// SPDX-License-Identifier: MIT
#include "context.hpp"
#include "needs.hpp"

#include <dirent.h>

#include <cstdlib>

#include "run_session.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace twinwire::conformance {
namespace {

TransportContext *g_context = nullptr;
std::unique_ptr<Transport> g_transport;

} // namespace

TransportContext &context()
{
    if (!g_context) throw std::logic_error("no transport context: the executable's main must set one");
    return *g_context;
}

void set_context(TransportContext *context) { g_context = context; }

Transport &transport()
{
    if (!g_transport) {
        std::string why;
        g_transport = context().create_transport(&why);
        if (!g_transport) throw std::runtime_error("cannot create the " + context().name() + " transport: " + why);
    }
    return *g_transport;
}

std::unique_ptr<Transport> load_plugin(const std::string &name, const Config &config, std::string *why,
                                       uint32_t host_table_size)
{
    PluginLoadReport report;
    auto library = PluginLibrary::open(name, config, &report);
    if (!library) {
        *why = "loading the plugin: " + report.reason;
        return nullptr;
    }
    return Transport::from_plugin(std::move(library), config, why, host_table_size);
}

const tw_transport_ops *plugin_ops() { return context().own_ops(transport()); }

void release_transport() { g_transport.reset(); }

int run_cases(int argc, char **argv, TransportContext &ctx)
{
    set_context(&ctx);
    std::vector<const char *> args(argv, argv + argc);
    bool reporter_chosen = false, warn_chosen = false;
    for (const char *a : args) {
        std::string arg = a;
        if (arg == "-r" || arg.rfind("--reporter", 0) == 0) reporter_chosen = true;
        if (arg == "-w" || arg.rfind("--warn", 0) == 0) warn_chosen = true;
    }
    if (!reporter_chosen) {
        args.insert(args.begin() + 1, kTableReporter);
        args.insert(args.begin() + 1, "-r");
    }
    // A filter that matches no case is a mistake, never a pass.
    if (!warn_chosen) {
        args.insert(args.begin() + 1, "NoTests");
        args.insert(args.begin() + 1, "-w");
    }
    int rc = twinwire::test::run_catch_session(static_cast<int>(args.size()), args.data());
    release_transport();
    set_context(nullptr);
    return rc;
}

const char *env_or_null(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : nullptr;
}

bool has_rdma_device()
{
    DIR *dir = opendir("/sys/class/infiniband");
    if (!dir) return false;
    bool found = false;
    while (dirent *entry = readdir(dir))
        if (entry->d_name[0] != '.') found = true;
    closedir(dir);
    return found;
}

} // namespace twinwire::conformance
