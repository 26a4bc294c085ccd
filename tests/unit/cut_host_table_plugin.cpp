// SPDX-License-Identifier: MIT
// "cuthost": another plugin file (TW_CUT_HOST_INNER: tcp, pair or fault)
// under a host table cut to its ABI 1.0 size, every byte past `size` a
// pointer to a trap.  The host zeroes its own table past `size`, so a plugin
// that calls a later member (vlog, transport_ops) without TW_HAS_MEMBER
// went unseen (issue 42 F10); here it calls the trap, which says so and
// aborts.  Every operation but those taking the host table is the inner
// plugin's own.
#include <twinwire/plugin.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace {

[[noreturn]] void trap()
{
    std::fputs("cut-host-table: the plugin called a host member past the table's size (no TW_HAS_MEMBER check)\n",
               stderr);
    std::abort();
}

// Room for any later tw_host: the 1.0 part of the host's table, then traps.
struct CutHost {
    alignas(tw_host) unsigned char bytes[1024];

    explicit CutHost(const tw_host *host)
    {
        void (*fn)() = trap;
        for (size_t off = 0; off + sizeof fn <= sizeof bytes; off += sizeof fn)
            std::memcpy(bytes + off, &fn, sizeof fn);
        std::memcpy(bytes, host, TW_HOST_SIZE_V1);
        tw_host *t = table();
        t->size = TW_HOST_SIZE_V1;
        t->version = 0;
    }
    tw_host *table() { return reinterpret_cast<tw_host *>(bytes); }
};

tw_transport_ops ops;
tw_plugin_info info;
const tw_transport_ops *inner;
std::mutex mutex;
std::map<tw_transport *, CutHost *> tables; // valid from init until fini returns

int cut_init(const tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    auto *cut = new CutHost(host);
    int rc = inner->init(cut->table(), out, why, why_len);
    if (rc < 0) {
        delete cut;
        return rc;
    }
    std::lock_guard<std::mutex> lock(mutex);
    tables[*out] = cut;
    return rc;
}

void cut_fini(tw_transport *t)
{
    inner->fini(t);
    std::lock_guard<std::mutex> lock(mutex);
    delete tables[t];
    tables.erase(t);
}

int cut_probe(const tw_host *host, char *buf, size_t len)
{
    CutHost cut(host);
    return inner->probe(cut.table(), buf, len);
}

int cut_check_config(const tw_host *host, char *why, size_t why_len)
{
    CutHost cut(host);
    return inner->check_config(cut.table(), why, why_len);
}

} // namespace

extern "C" TW_EXPORT const tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    const char *path = std::getenv("TW_CUT_HOST_INNER");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    auto entry = lib ? reinterpret_cast<tw_plugin_entry_fn>(dlsym(lib, TW_PLUGIN_ENTRY_SYMBOL)) : nullptr;
    const tw_plugin_info *in = entry ? entry(host_abi_major, host_abi_minor) : nullptr;
    if (!in || !in->ops) {
        std::fprintf(stderr, "cuthost: cannot load the plugin in TW_CUT_HOST_INNER (%s): %s\n", path ? path : "unset",
                     lib ? "its entry point refused" : dlerror());
        return nullptr;
    }
    inner = in->ops;
    std::memcpy(&ops, inner, std::min<size_t>(inner->size, sizeof ops));
    ops.size = std::min<uint32_t>(inner->size, sizeof ops);
    ops.name = "cuthost";
    ops.init = cut_init;
    ops.fini = cut_fini;
    if (ops.probe) ops.probe = cut_probe;
    if (ops.check_config) ops.check_config = cut_check_config;
    std::memcpy(&info, in, std::min<size_t>(in->size, sizeof info));
    info.name = "cuthost";
    info.ops = &ops;
    return &info;
}
