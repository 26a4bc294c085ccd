// SPDX-License-Identifier: MIT
// The plugin's only link to rdma-core.  Every libibverbs / librdmacm function
// the plugin calls is defined here, hidden, as a forwarder through a pointer
// that load_rdma_core() resolves with dlvsym at init.  The call sites keep
// the plain rdma-core names; verbs that the headers inline through the
// context's ops (ibv_post_send, ibv_poll_cq, ...) need nothing.  The link
// has no -libverbs / -lrdmacm and -z defs (plugin_link_args), so a call to
// a function missing from the table below fails the build, not the load.
#include "rdma_core.hpp"

#include "report.hpp"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <dlfcn.h>

#include <cerrno>
#include <mutex>

// X(library, symbol version, return type, name, (parameters), (arguments)),
// one list per library.  The versions are those a direct link against
// rdma-core 44 records; the parameter lists must match the headers'
// declarations (the compiler checks).
#define TWRDMA_VERBS_FUNCTIONS(X)                                                                                      \
    X(kVerbs, "IBVERBS_1.11", int, _ibv_query_gid_ex,                                                                  \
      (ibv_context * c, uint32_t port, uint32_t index, ibv_gid_entry * entry, uint32_t flags, size_t size),            \
      (c, port, index, entry, flags, size))                                                                            \
    X(kVerbs, "IBVERBS_1.1", void, ibv_ack_cq_events, (ibv_cq * cq, unsigned n), (cq, n))                              \
    X(kVerbs, "IBVERBS_1.1", void, ibv_ack_async_event, (ibv_async_event * event), (event))                            \
    X(kVerbs, "IBVERBS_1.1", ibv_pd *, ibv_alloc_pd, (ibv_context * c), (c))                                           \
    X(kVerbs, "IBVERBS_1.1", int, ibv_close_device, (ibv_context * c), (c))                                            \
    X(kVerbs, "IBVERBS_1.0", ibv_comp_channel *, ibv_create_comp_channel, (ibv_context * c), (c))                      \
    X(kVerbs, "IBVERBS_1.1", ibv_srq *, ibv_create_srq, (ibv_pd * pd, ibv_srq_init_attr * attr), (pd, attr))           \
    X(kVerbs, "IBVERBS_1.1", ibv_cq *, ibv_create_cq,                                                                  \
      (ibv_context * c, int cqe, void *cq_context, ibv_comp_channel *channel, int vector),                             \
      (c, cqe, cq_context, channel, vector))                                                                           \
    X(kVerbs, "IBVERBS_1.1", int, ibv_dealloc_pd, (ibv_pd * pd), (pd))                                                 \
    X(kVerbs, "IBVERBS_1.1", int, ibv_dereg_mr, (ibv_mr * mr), (mr))                                                   \
    X(kVerbs, "IBVERBS_1.0", int, ibv_destroy_comp_channel, (ibv_comp_channel * channel), (channel))                   \
    X(kVerbs, "IBVERBS_1.1", int, ibv_destroy_cq, (ibv_cq * cq), (cq))                                                 \
    X(kVerbs, "IBVERBS_1.1", int, ibv_destroy_srq, (ibv_srq * srq), (srq))                                             \
    X(kVerbs, "IBVERBS_1.1", void, ibv_free_device_list, (ibv_device * *list), (list))                                 \
    X(kVerbs, "IBVERBS_1.1", int, ibv_get_cq_event, (ibv_comp_channel * channel, ibv_cq * *cq, void **cq_context),     \
      (channel, cq, cq_context))                                                                                       \
    X(kVerbs, "IBVERBS_1.1", const char *, ibv_event_type_str, (ibv_event_type event), (event))                        \
    X(kVerbs, "IBVERBS_1.1", int, ibv_get_async_event, (ibv_context * c, ibv_async_event * event), (c, event))         \
    X(kVerbs, "IBVERBS_1.1", ibv_device **, ibv_get_device_list, (int *n), (n))                                        \
    X(kVerbs, "IBVERBS_1.1", const char *, ibv_get_device_name, (ibv_device * device), (device))                       \
    X(kVerbs, "IBVERBS_1.1", ibv_context *, ibv_open_device, (ibv_device * device), (device))                          \
    X(kVerbs, "IBVERBS_1.1", int, ibv_query_device, (ibv_context * c, ibv_device_attr * attr), (c, attr))              \
    X(kVerbs, "IBVERBS_1.1", int, ibv_query_gid, (ibv_context * c, uint8_t port, int index, ibv_gid *gid),             \
      (c, port, index, gid))                                                                                           \
    X(kVerbs, "IBVERBS_1.1", int, ibv_query_port, (ibv_context * c, uint8_t port, _compat_ibv_port_attr * attr),       \
      (c, port, attr))                                                                                                 \
    X(kVerbs, "IBVERBS_1.1", ibv_mr *, ibv_reg_mr, (ibv_pd * pd, void *addr, size_t length, int access),               \
      (pd, addr, length, access))                                                                                      \
    X(kVerbs, "IBVERBS_1.1", const char *, ibv_wc_status_str, (ibv_wc_status status), (status))

#define TWRDMA_CM_FUNCTIONS(X)                                                                                         \
    X(kCm, "RDMACM_1.0", int, rdma_accept, (rdma_cm_id * id, rdma_conn_param * param), (id, param))                    \
    X(kCm, "RDMACM_1.0", int, rdma_ack_cm_event, (rdma_cm_event * event), (event))                                     \
    X(kCm, "RDMACM_1.0", int, rdma_bind_addr, (rdma_cm_id * id, sockaddr * addr), (id, addr))                          \
    X(kCm, "RDMACM_1.0", int, rdma_connect, (rdma_cm_id * id, rdma_conn_param * param), (id, param))                   \
    X(kCm, "RDMACM_1.0", rdma_event_channel *, rdma_create_event_channel, (void), ())                                  \
    X(kCm, "RDMACM_1.0", int, rdma_create_id,                                                                          \
      (rdma_event_channel * channel, rdma_cm_id * *id, void *context, rdma_port_space ps), (channel, id, context, ps)) \
    X(kCm, "RDMACM_1.0", int, rdma_create_qp, (rdma_cm_id * id, ibv_pd * pd, ibv_qp_init_attr * attr), (id, pd, attr)) \
    X(kCm, "RDMACM_1.0", void, rdma_destroy_event_channel, (rdma_event_channel * channel), (channel))                  \
    X(kCm, "RDMACM_1.0", int, rdma_destroy_id, (rdma_cm_id * id), (id))                                                \
    X(kCm, "RDMACM_1.0", void, rdma_destroy_qp, (rdma_cm_id * id), (id))                                               \
    X(kCm, "RDMACM_1.0", int, rdma_disconnect, (rdma_cm_id * id), (id))                                                \
    X(kCm, "RDMACM_1.0", const char *, rdma_event_str, (rdma_cm_event_type event), (event))                            \
    X(kCm, "RDMACM_1.0", void, rdma_free_devices, (ibv_context * *list), (list))                                       \
    X(kCm, "RDMACM_1.0", int, rdma_get_cm_event, (rdma_event_channel * channel, rdma_cm_event * *event),               \
      (channel, event))                                                                                                \
    X(kCm, "RDMACM_1.0", ibv_context **, rdma_get_devices, (int *n), (n))                                              \
    X(kCm, "RDMACM_1.0", int, rdma_listen, (rdma_cm_id * id, int backlog), (id, backlog))                              \
    X(kCm, "RDMACM_1.0", int, rdma_migrate_id, (rdma_cm_id * id, rdma_event_channel * channel), (id, channel))         \
    X(kCm, "RDMACM_1.0", int, rdma_reject, (rdma_cm_id * id, const void *data, uint8_t len), (id, data, len))          \
    X(kCm, "RDMACM_1.0", int, rdma_resolve_addr, (rdma_cm_id * id, sockaddr * src, sockaddr * dst, int timeout_ms),    \
      (id, src, dst, timeout_ms))                                                                                      \
    X(kCm, "RDMACM_1.0", int, rdma_resolve_route, (rdma_cm_id * id, int timeout_ms), (id, timeout_ms))                 \
    X(kCm, "RDMACM_1.0", int, rdma_set_option, (rdma_cm_id * id, int level, int name, void *value, size_t len),        \
      (id, level, name, value, len))

#define TWRDMA_RDMA_CORE_FUNCTIONS(X) TWRDMA_VERBS_FUNCTIONS(X) TWRDMA_CM_FUNCTIONS(X)

// Where a library's pointers live in Resolved.
#define TWRDMA_GROUP(lib)   TWRDMA_GROUP_##lib
#define TWRDMA_GROUP_kVerbs verbs
#define TWRDMA_GROUP_kCm    cm

namespace twrdma {
namespace {

enum Library { kVerbs, kCm, kLibraries };

struct LibraryName {
    const char *soname;
    const char *packages; ///< what provides it, for the message
};
// librdmacm needs libibverbs: open that first so its failure names it.
constexpr LibraryName kLibraryNames[kLibraries] = {
    {"libibverbs.so.1", "libibverbs1 (Debian, Ubuntu) or libibverbs (Fedora, RHEL, SUSE: rdma-core)"},
    {"librdmacm.so.1", "librdmacm1 (Debian, Ubuntu) or librdmacm (Fedora, RHEL, SUSE: rdma-core)"},
};

// One pointer per function, typed from the header's own declaration, in
// one group per library.
#define TWRDMA_POINTER(lib, version, ret, name, params, args) decltype(&::name) name;
struct VerbsFunctions { ///< libibverbs
    TWRDMA_VERBS_FUNCTIONS(TWRDMA_POINTER)
};
struct CmFunctions { ///< librdmacm
    TWRDMA_CM_FUNCTIONS(TWRDMA_POINTER)
};
#undef TWRDMA_POINTER
struct Resolved {
    VerbsFunctions verbs;
    CmFunctions cm;
};

Resolved g_fn; // written once, under g_mutex, before g_loaded
bool g_loaded = false;
std::mutex g_mutex;

int refuse(std::string *why, const std::string &text)
{
    *why = text;
    return -ELIBACC;
}

} // namespace

int load_rdma_core(std::string *why)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_loaded) return 0;
    // Bare sonames: the dynamic loader's own search (which ignores
    // LD_LIBRARY_PATH in setuid processes), never the working directory,
    // never the unversioned .so links that only -dev packages ship.
    void *handle[kLibraries] = {};
    for (int lib = 0; lib < kLibraries; ++lib) {
        handle[lib] = dlopen(kLibraryNames[lib].soname, RTLD_NOW | RTLD_LOCAL);
        if (!handle[lib]) {
            const char *err = dlerror();
            return refuse(why,
                          format("%s (rdma-core) cannot be loaded (dlopen: %s); install %s to use RDMA, or "
                                 "use the TCP transport",
                                 kLibraryNames[lib].soname, err ? err : "unknown error", kLibraryNames[lib].packages));
        }
    }
    // Resolve into a local table: a partial one is never visible.  The
    // libraries stay loaded on failure too: unloading rdma-core is not safe.
    Resolved fn{};
#define TWRDMA_RESOLVE(lib, version, ret, name, params, args)                                                          \
    fn.TWRDMA_GROUP(lib).name =                                                                                        \
        reinterpret_cast<decltype(fn.TWRDMA_GROUP(lib).name)>(dlvsym(handle[lib], #name, version));                    \
    if (!fn.TWRDMA_GROUP(lib).name)                                                                                    \
        return refuse(why, format("%s has no %s@%s: this rdma-core is older than the one the plugin was built "        \
                                  "against; upgrade %s, or use the TCP transport",                                     \
                                  kLibraryNames[lib].soname, #name, version, kLibraryNames[lib].packages));
    TWRDMA_RDMA_CORE_FUNCTIONS(TWRDMA_RESOLVE)
#undef TWRDMA_RESOLVE
    g_fn = fn;
    g_loaded = true;
    return 0;
}

} // namespace twrdma

// The forwarders.  The name is parenthesised so that the headers' function
// macros of the same name (ibv_query_port, ibv_reg_mr) are not expanded.
#define TWRDMA_FORWARD(lib, version, ret, name, params, args)                                                          \
    extern "C" __attribute__((visibility("hidden"))) ret(name) params                                                  \
    {                                                                                                                  \
        return (twrdma::g_fn.TWRDMA_GROUP(lib).name)args;                                                              \
    }
TWRDMA_RDMA_CORE_FUNCTIONS(TWRDMA_FORWARD)
#undef TWRDMA_FORWARD
