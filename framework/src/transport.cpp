// SPDX-License-Identifier: MIT
// An initialised transport and its per-loop state.
#include "host_objects.hpp"
#include "transport_keys.hpp"

#include <twinwire/log.hpp>
#include <twinwire/loop.hpp>
#include <twinwire/transport.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace twinwire {
namespace {

std::mutex g_loops_mutex; // guards Transport::Impl::loops (workers attach concurrently)

// Run the transport's init; on refusal *why gets its reason and the code's text.
bool init_transport(const tw_transport_ops &ops, HostServices &host, tw_transport **handle, std::string *why,
                    const std::string &path)
{
    // Said before a plugin's init: if it crashes, this is the last line left.
    if (!path.empty()) TW_INFO("loader", "initialising transport %s (%s)", host.name.c_str(), path.c_str());
    char reason[512] = "";
    int rc = ops.init(&host.table, handle, reason, sizeof reason);
    reason[sizeof reason - 1] = '\0'; // a plugin that filled it without a NUL
    if (rc >= 0 && *handle) return true;
    *handle = nullptr;
    if (rc >= 0) {
        *why = "init reported success but returned no transport";
        return false;
    }
    // A bad value is the user's mistake, not a missing capability: it stops
    // start-up in every mode instead of quietly falling back to TCP.
    if (rc == -TW_ECONFIG)
        throw ConfigError(std::string(reason[0] ? reason : "invalid configuration") + " (" + host.name + " transport)");
    const char *text = ops.strerror(rc);
    std::string code = text ? text : (-rc >= TW_EBASE ? tw_strerror(rc) : std::strerror(-rc));
    *why = std::string(reason[0] ? reason : "init failed") + " (" + code + ")";
    return false;
}

} // namespace

struct __attribute__((visibility("hidden"))) Transport::Impl {
    tw_transport_ops ops{};
    tw_transport *handle = nullptr;
    std::string name;
    std::unique_ptr<PluginLibrary> library;
    std::unique_ptr<HostServices> host;
    std::vector<std::pair<Loop *, tw_transport_loop *>> loops;

    // Keys under the transport's prefix that it never read are typos or keys
    // of another version: an error, like any unknown key.
    void check_unknown_keys(const Config &config) const { throw_unknown_keys(config, name, host->keys_looked_up()); }
};

Transport::Transport() : impl_(std::make_unique<Impl>()) {}

std::unique_ptr<Transport> Transport::builtin_tcp(const Config &config)
{
    std::unique_ptr<Transport> t(new Transport());
    Impl &d = *t->impl_;
    d.ops = builtin_tcp_ops();
    d.name = d.ops.name;
    std::string why;
    d.host = std::make_unique<HostServices>(d.name, config);
    if (!init_transport(d.ops, *d.host, &d.handle, &why, {})) throw std::runtime_error("built-in TCP backend: " + why);
    d.check_unknown_keys(config);
    return t;
}

std::unique_ptr<Transport> Transport::from_plugin(std::unique_ptr<PluginLibrary> library, const Config &config,
                                                  std::string *why, uint32_t host_table_size)
{
    std::unique_ptr<Transport> t(new Transport());
    Impl &d = *t->impl_;
    d.ops = library->ops();
    d.name = d.ops.name;
    d.host = std::make_unique<HostServices>(d.name, config, host_table_size);
    if (!init_transport(d.ops, *d.host, &d.handle, why, library->path())) return nullptr;
    d.library = std::move(library);
    d.check_unknown_keys(config);
    return t;
}

Transport::~Transport()
{
    Impl &d = *impl_;
    if (!d.loops.empty())
        TW_WARN(d.name.c_str(), "transport finalised with %zu loop(s) still attached", d.loops.size());
    if (d.handle) d.ops.fini(d.handle);
}

const tw_transport_ops &Transport::ops() const { return impl_->ops; }
tw_transport *Transport::handle() const { return impl_->handle; }
const std::string &Transport::name() const { return impl_->name; }
uint64_t Transport::caps() const { return impl_->ops.caps; }
const PluginLibrary *Transport::library() const { return impl_->library.get(); }

tw_transport_loop *Transport::attach(Loop &loop)
{
    if (tw_transport_loop *tl = tloop(loop)) return tl;
    Impl &d = *impl_;
    tw_transport_loop *tl = nullptr;
    int rc = d.ops.loop_attach(d.handle, loop.handle(), &tl);
    if (rc < 0 || !tl)
        throw std::runtime_error(d.name + ": loop_attach on loop " + std::to_string(loop.index()) +
                                 " failed: " + error_text(rc));
    {
        std::lock_guard<std::mutex> lock(g_loops_mutex);
        d.loops.emplace_back(&loop, tl);
    }
    loop.add_pending_source(&d.ops, tl);
    return tl;
}

tw_transport_loop *Transport::tloop(const Loop &loop) const
{
    std::lock_guard<std::mutex> lock(g_loops_mutex);
    for (const auto &p : impl_->loops)
        if (p.first == &loop) return p.second;
    return nullptr;
}

void Transport::detach(Loop &loop)
{
    Impl &d = *impl_;
    tw_transport_loop *tl = nullptr;
    {
        std::lock_guard<std::mutex> lock(g_loops_mutex);
        auto it = std::find_if(d.loops.begin(), d.loops.end(), [&](const auto &p) { return p.first == &loop; });
        if (it == d.loops.end()) return;
        tl = it->second;
        d.loops.erase(it);
    }
    loop.remove_pending_source(tl);
    d.ops.loop_detach(tl);
}

std::string Transport::error_text(int err) const
{
    if (err == 0) return "success";
    if (const char *text = impl_->ops.strerror(err)) return text;
    int e = err < 0 ? -err : err;
    if (e >= TW_EBASE) return tw_strerror(e);
    return std::strerror(e);
}

std::string Transport::describe() const
{
    char buf[8192];
    int n = impl_->ops.describe(impl_->handle, buf, sizeof buf);
    if (n < 0) return {};
    return std::string(buf, std::min<size_t>(static_cast<size_t>(n), sizeof buf - 1));
}

} // namespace twinwire
