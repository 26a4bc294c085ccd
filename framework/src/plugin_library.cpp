// SPDX-License-Identifier: MIT
// dlopen a plugin file and check it against the ABI before anything runs.
#include "host_objects.hpp"
#include "ops_normalise.hpp"
#include "plugin_search.hpp"
#include "plugin_trust.hpp"

#include <twinwire/log.hpp>
#include <twinwire/transport.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <sys/stat.h>

namespace twinwire {
namespace {

std::string dl_error()
{
    const char *e = dlerror();
    return e ? e : "unknown dlopen error";
}

// A plugin built for another ABI major exports another entry symbol; say which.
std::string other_abi_hint(void *dl)
{
    for (unsigned major = 0; major < 16; ++major) {
        if (major == TW_ABI_MAJOR) continue;
        std::string sym = "twinwire_plugin_entry_v" + std::to_string(major);
        if (dlsym(dl, sym.c_str()))
            return "it exports " + sym + ": built for ABI " + std::to_string(major) + ", this program speaks ABI " +
                   std::to_string(TW_ABI_MAJOR);
    }
    return "it does not export " TW_PLUGIN_ENTRY_SYMBOL ": not a twinwire plugin";
}

} // namespace

struct __attribute__((visibility("hidden"))) PluginLibrary::Impl {
    void *dl = nullptr;
    const tw_plugin_info *info = nullptr;
    tw_transport_ops ops{};
    std::string path;
};

PluginLibrary::PluginLibrary() : impl_(std::make_unique<Impl>()) {}

std::unique_ptr<PluginLibrary> PluginLibrary::open_file(const std::string &path, PluginLoadReport *report,
                                                        const std::string &expected_name)
{
    auto fail = [&](const std::string &why) -> std::unique_ptr<PluginLibrary> {
        report->attempts.push_back({path, why});
        report->reason = path + ": " + why;
        return nullptr;
    };
    if (path.empty() || path[0] != '/')
        return fail("not an absolute path (plugins never load from the working directory)");

    std::string resolved;
    std::string untrusted = plugin_file_untrusted(path, &resolved);
    if (!untrusted.empty()) return fail(untrusted);
    // Said before dlopen and the entry point run its code: if either
    // crashes, this is the last line left (stderr is unbuffered, a log
    // file line-buffered).
    TW_INFO("loader", "loading plugin %s", path.c_str());
    dlerror();
    // RTLD_NOW: a missing symbol or library fails here, not mid-connection.
    // RTLD_NODELETE: rdma-core keeps process-wide state (fork handlers, device
    // lists) that must not vanish under it when the host lets the plugin go.
    // The checked file itself, not the path again: no symbolic link swapped in between.
    void *dl = dlopen(resolved.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!dl) return fail("dlopen failed: " + dl_error());

    std::unique_ptr<PluginLibrary> lib(new PluginLibrary());
    lib->impl_->dl = dl;
    lib->impl_->path = path;
    auto entry = reinterpret_cast<tw_plugin_entry_fn>(dlsym(dl, TW_PLUGIN_ENTRY_SYMBOL));
    if (!entry) return fail(other_abi_hint(dl));

    const tw_plugin_info *info = entry(TW_ABI_MAJOR, TW_ABI_MINOR);
    if (!info)
        return fail("its entry point refused this program's ABI " + std::to_string(TW_ABI_MAJOR) + "." +
                    std::to_string(TW_ABI_MINOR));
    if (info->size < TW_PLUGIN_INFO_SIZE_V1)
        return fail("plugin info is " + std::to_string(info->size) + " bytes, smaller than the " +
                    std::to_string(TW_PLUGIN_INFO_SIZE_V1) + " bytes of ABI 1.0");
    if (info->abi_major != TW_ABI_MAJOR)
        return fail("built for ABI " + std::to_string(info->abi_major) + "." + std::to_string(info->abi_minor) +
                    ", this program speaks ABI " + std::to_string(TW_ABI_MAJOR) + "." + std::to_string(TW_ABI_MINOR));
    tw_transport_ops &ops = lib->impl_->ops;
    std::string why = normalise_ops(info->ops, &ops);
    if (!why.empty()) return fail(why);
    // The name decides its config keys and how its connections are counted:
    // a file serves the one transport it declares, never another.
    if (!expected_name.empty() && expected_name != ops.name)
        return fail("it is the plugin of transport '" + std::string(ops.name) + "', not '" + expected_name + "'");
    lib->impl_->info = info;

    report->attempts.push_back({path, "loaded"});
    report->loaded = true;
    report->path = path;
    report->reason.clear();
    report->abi_major = info->abi_major;
    report->abi_minor = info->abi_minor;
    report->plugin_version = info->plugin_version ? info->plugin_version : "";
    return lib;
}

std::unique_ptr<PluginLibrary> PluginLibrary::open(const std::string &name, const Config &config,
                                                   PluginLoadReport *report)
{
    std::vector<PluginCandidate> candidates = plugin_candidates(name, config, &report->search_dirs);
    for (const PluginCandidate &c : candidates) {
        struct stat st;
        if (stat(c.path.c_str(), &st) != 0) {
            report->attempts.push_back({c.path, std::string("not found (") + std::strerror(errno) + ")"});
            continue;
        }
        // The first file that exists decides: a broken plugin is reported,
        // not silently replaced by another copy further down the path.
        return open_file(c.path, report, name);
    }
    std::string tried;
    for (const auto &a : report->attempts) tried += (tried.empty() ? "" : ", ") + a.path;
    for (const auto &d : report->search_dirs)
        if (d.find("ignored") != std::string::npos) tried += (tried.empty() ? "" : "; ") + d;
    report->reason = plugin_file_name(name) + " not found (looked for " + (tried.empty() ? "nothing" : tried) + ")";
    return nullptr;
}

std::string PluginLibrary::probe(const Config &config) const
{
    const tw_transport_ops &ops = impl_->ops;
    HostServices host(ops.name, config);
    std::string text(16384, '\0');
    int n = ops.probe(&host.table, &text[0], text.size());
    if (n < 0) return {};
    text.resize(std::min<size_t>(static_cast<size_t>(n), text.size() - 1));
    return text;
}

PluginLibrary::~PluginLibrary()
{
    if (impl_->dl) dlclose(impl_->dl);
}

const tw_plugin_info &PluginLibrary::info() const { return *impl_->info; }
const tw_transport_ops &PluginLibrary::ops() const { return impl_->ops; }
const std::string &PluginLibrary::path() const { return impl_->path; }

} // namespace twinwire
