// SPDX-License-Identifier: MIT
#include "devices.hpp"

#include "port_links.hpp"
#include "report.hpp"

#include <twinwire/errors.h>

#include <arpa/inet.h>
#include <sys/stat.h>
#include <net/if.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstring>

namespace twrdma {

const char *port_state_name(ibv_port_state state)
{
    switch (state) {
    case IBV_PORT_NOP:
        return "NOP";
    case IBV_PORT_DOWN:
        return "DOWN";
    case IBV_PORT_INIT:
        return "INIT";
    case IBV_PORT_ARMED:
        return "ARMED";
    case IBV_PORT_ACTIVE:
        return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
        return "ACTIVE_DEFER";
    }
    return "UNKNOWN";
}

static const char *gid_type_name(ibv_gid_type type)
{
    switch (type) {
    case IBV_GID_TYPE_IB:
        return "IB";
    case IBV_GID_TYPE_ROCE_V1:
        return "RoCEv1";
    case IBV_GID_TYPE_ROCE_V2:
        return "RoCEv2";
    }
    return "unknown";
}

static int query_gid_type(ibv_context *ctx, uint8_t port, int index, ibv_gid_type *type)
{
    ibv_gid_entry entry{};
    int rc = ibv_query_gid_ex(ctx, port, static_cast<uint32_t>(index), &entry, 0);
    if (rc == 0) *type = static_cast<ibv_gid_type>(entry.gid_type);
    return rc;
}

static std::string gid_text(const ibv_gid &gid)
{
    char buf[INET6_ADDRSTRLEN] = "";
    inet_ntop(AF_INET6, gid.raw, buf, sizeof buf);
    return buf;
}

Devices::~Devices()
{
    for (auto &d : devices_)
        if (d->pd) ibv_dealloc_pd(d->pd);
    for (ibv_context **old : retained_) rdma_free_devices(old);
    if (list_) rdma_free_devices(list_);
}

static bool port_usable(ibv_context *ctx, uint8_t port, const Settings &s, std::string *why)
{
    ibv_port_attr pa{};
    int rc = ibv_query_port(ctx, port, &pa);
    if (rc) {
        *why = call_failed("ibv_query_port", rc);
        return false;
    }
    if (pa.state != IBV_PORT_ACTIVE) {
        *why = format("%s port %u is %s", ibv_get_device_name(ctx->device), port, port_state_name(pa.state));
        return false;
    }
    if (s.gid_index >= 0) {
        ibv_gid_type type{};
        if (s.gid_index >= pa.gid_tbl_len || query_gid_type(ctx, port, s.gid_index, &type) != 0) {
            *why = format("%s port %u has no GID index %d (rdma.gid_index)", ibv_get_device_name(ctx->device), port,
                          s.gid_index);
            return false;
        }
        if (type != IBV_GID_TYPE_ROCE_V2) {
            *why = format("%s port %u GID index %d is %s, not RoCEv2 (rdma.gid_index)",
                          ibv_get_device_name(ctx->device), port, s.gid_index, gid_type_name(type));
            return false;
        }
    }
    return true;
}

// ibv_get_device_list fails with ENOSYS when the kernel has no uverbs
// interface at all: no driver or device would help, the module would.
static const char *kNoKernelRdma =
    "this kernel has no RDMA support (ib_uverbs): ibv_get_device_list: Function not implemented (errno 38); "
    "hint: load the module (`modprobe ib_uverbs`, and a driver such as rdma_rxe), or use the TCP transport";

static bool kernel_lacks_uverbs()
{
    ibv_device **list = ibv_get_device_list(nullptr);
    if (list) {
        ibv_free_device_list(list);
        return false;
    }
    return errno == ENOSYS;
}

static ino_t node_inode(const ibv_context *ctx)
{
    struct stat st {};
    return stat(ctx->device->dev_path, &st) == 0 ? st.st_ino : 0;
}

void Devices::add(ibv_context *ctx, std::string *down)
{
    const Settings &s = *settings_;
    auto d = std::make_unique<Device>();
    d->ctx = ctx;
    d->name = ibv_get_device_name(ctx->device);
    d->dev_path = ctx->device->dev_path;
    d->dev_ino = node_inode(ctx);
    if (!s.device.empty() && d->name != s.device) {
        d->why_unusable = "not the configured rdma.device";
        devices_.push_back(std::move(d));
        return;
    }
    int rc = ibv_query_device(ctx, &d->attr);
    if (rc) {
        d->why_unusable = call_failed("ibv_query_device", rc);
        devices_.push_back(std::move(d));
        return;
    }
    std::string port_why;
    for (uint8_t p = 1; p <= d->attr.phys_port_cnt && !d->usable; ++p) {
        if (s.port && p != s.port) continue;
        if (port_usable(ctx, p, s, &port_why)) {
            d->usable = true;
            d->port = p;
            d->events->port_state = IBV_PORT_ACTIVE;
        }
    }
    if (s.port && s.port > d->attr.phys_port_cnt)
        port_why = format("%s has no port %u (rdma.port)", d->name.c_str(), s.port);
    if (d->usable) {
        d->pd = ibv_alloc_pd(ctx);
        if (!d->pd) {
            d->usable = false;
            port_why = call_failed("ibv_alloc_pd", errno);
        }
    }
    if (!d->usable) {
        d->why_unusable = port_why;
        if (!down->empty()) *down += "; ";
        *down += port_why;
    }
    devices_.push_back(std::move(d));
}

int Devices::open(const Settings &s, std::string *why)
{
    std::lock_guard<std::mutex> lock(mutex_);
    settings_ = &s;
    int n = 0;
    list_ = rdma_get_devices(&n);
    if ((!list_ || n == 0) && kernel_lacks_uverbs()) {
        *why = kNoKernelRdma;
        return -TW_ENODEVICE;
    }
    if (!list_ || n == 0) {
        *why = "no RDMA device found (ibv_devices lists none); load a driver and install its user-space provider "
               "(ibverbs-providers on Debian and Ubuntu), or create a SoftRoCE device "
               "(`rdma link add rxe0 type rxe netdev eth0`), or use the TCP transport";
        return -TW_ENODEVICE;
    }
    std::string down;
    for (int i = 0; i < n; ++i) add(list_[i], &down);
    bool named_found = s.device.empty();
    for (auto &d : devices_) named_found = named_found || d->name == s.device;
    if (!named_found) {
        *why = format("rdma.device = %s: no such RDMA device", s.device.c_str());
        return -TW_ENODEVICE;
    }
    for (auto &d : devices_)
        if (d->usable) return 0;
    *why = "no RDMA port is ACTIVE (" + down + "); check the link (`rdma link`, `ip link`) and the cable/netdev";
    return -TW_EPORTDOWN;
}

void Devices::refresh_locked()
{
    int n = 0;
    ibv_context **list = rdma_get_devices(&n);
    if (!list) return;
    std::string down;
    for (int i = 0; i < n; ++i) {
        // A released device's context may have been freed and its address
        // taken by a new one: only its node in sysfs tells them apart.
        bool known = false;
        for (auto &d : devices_)
            known = known || (d->ctx == list[i] && (!d->released || node_inode(list[i]) == d->dev_ino));
        if (!known) add(list[i], &down);
    }
    // The old list holds a reference on every device in it: rdma_cm closes
    // a removed device only when the last one goes, so it is kept while a
    // removed device still has verbs objects of ours.  Also while a device
    // we use is missing from the new list: libibverbs may list a device
    // anew (a new ibv_device for the same node), and rdma_cm then closes
    // the context we hold once no list names it.
    bool releasing = false;
    for (auto &d : devices_) {
        if (d->released) continue;
        bool listed = false;
        for (int i = 0; i < n && !listed; ++i) listed = list[i] == d->ctx;
        releasing = releasing || d->gone || !listed;
    }
    if (list_) retained_.push_back(list_);
    list_ = list;
    if (!releasing) {
        for (ibv_context **old : retained_) rdma_free_devices(old);
        retained_.clear();
    }
}

void Devices::release(Device *d, uint64_t now_ns)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (d->released) return;
    // EIO from a device already taken away means it is freed anyway (what
    // RDMAV_ALLOW_DISASSOC_DESTROY makes libibverbs report as success).
    if (d->pd) ibv_dealloc_pd(d->pd);
    d->pd = nullptr;
    d->released = true;
    d->released_ns = now_ns;
    refresh_locked(); // the lists that hold it go: rdma_cm closes it
}

Device *Devices::of(const ibv_context *ctx)
{
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto &d : devices_)
        if (d->ctx == ctx && !d->released) return d.get();
    return nullptr;
}

void Devices::refresh()
{
    std::lock_guard<std::mutex> lock(mutex_);
    refresh_locked();
}

Device *Devices::find(const ibv_context *ctx)
{
    std::lock_guard<std::mutex> lock(mutex_);
    for (int pass = 0; pass < 2; ++pass) {
        for (auto &d : devices_)
            if (d->ctx == ctx && !d->gone) return d.get();
        if (pass == 0) refresh_locked(); // rdma_cm opened a device added since
    }
    return nullptr;
}

std::vector<Device *> Devices::all() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Device *> out;
    for (auto &d : devices_) out.push_back(d.get());
    return out;
}

std::string Devices::describe() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out;
    for (auto &p : devices_) {
        const Device &d = *p;
        if (d.released) out += format("device: %s removed: released (%s)\n", d.name.c_str(), d.gone_why.c_str());
        else if (d.gone) out += format("device: %s removed: being released (%s)\n", d.name.c_str(), d.gone_why.c_str());
        else if (d.usable) out += format("device: %s in use, %s\n", d.name.c_str(), device_events_text(d).c_str());
        else out += format("device: %s unused: %s\n", d.name.c_str(), d.why_unusable.c_str());
    }
    return out;
}

std::string probe_devices()
{
    std::string out;
    int n = 0;
    ibv_device **list = ibv_get_device_list(&n);
    if (!list && errno == ENOSYS) return format("devices: 0\nerror: %s\n", kNoKernelRdma);
    if (!list) return format("devices: 0\nerror: %s\n", call_failed("ibv_get_device_list", errno).c_str());
    out += format("devices: %d\n", n);
    for (int i = 0; i < n; ++i) {
        const char *name = ibv_get_device_name(list[i]);
        ibv_context *ctx = ibv_open_device(list[i]);
        if (!ctx) {
            out += format("device: %s (cannot open: %s)\n", name, call_failed("ibv_open_device", errno).c_str());
            continue;
        }
        ibv_device_attr attr{};
        if (ibv_query_device(ctx, &attr) == 0) {
            out += format("device: %s ports %u max_qp %d max_qp_wr %d max_cqe %d max_mr %d\n", name, attr.phys_port_cnt,
                          attr.max_qp, attr.max_qp_wr, attr.max_cqe, attr.max_mr);
            for (uint8_t p = 1; p <= attr.phys_port_cnt; ++p) {
                ibv_port_attr pa{};
                if (ibv_query_port(ctx, p, &pa)) continue;
                // RoCE: the netdev of GID 0 is the port's interface (what rdma_cm resolves to).
                ibv_gid_entry first{};
                std::string netdev;
                if (ibv_query_gid_ex(ctx, p, 0, &first, 0) == 0) netdev = netdev_text(first.ndev_ifindex);
                out += format("port: %s/%u state %s active_mtu %d link_layer %s %s%s%s\n", name, p,
                              port_state_name(pa.state), 128 << pa.active_mtu,
                              pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand",
                              link_rate_text(pa.active_width, pa.active_speed).c_str(),
                              netdev.empty() ? "" : " netdev ", netdev.c_str());
                for (int g = 0; g < pa.gid_tbl_len; ++g) {
                    ibv_gid gid{};
                    if (ibv_query_gid(ctx, p, g, &gid)) break;
                    bool zero = true;
                    for (uint8_t b : gid.raw) zero = zero && b == 0;
                    if (zero) continue;
                    ibv_gid_entry entry{};
                    bool known = ibv_query_gid_ex(ctx, p, static_cast<uint32_t>(g), &entry, 0) == 0;
                    const char *tname = known ? gid_type_name(static_cast<ibv_gid_type>(entry.gid_type)) : "?";
                    char ifname[IF_NAMESIZE] = "";
                    bool has_netdev = known && entry.ndev_ifindex && if_indextoname(entry.ndev_ifindex, ifname);
                    out += format("gid: %s/%u[%d] %s %s%s%s\n", name, p, g, gid_text(gid).c_str(), tname,
                                  has_netdev ? " netdev " : "", ifname);
                }
            }
        }
        ibv_close_device(ctx);
    }
    ibv_free_device_list(list);
    return out;
}

} // namespace twrdma

namespace twrdma {

bool Devices::gid_source(const Settings &s, int family, sockaddr_storage *out, std::string *why) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto &entry : devices_) {
        const Device &d = *entry;
        if (!d.usable || d.gone) continue;
        for (uint8_t p = 1; p <= d.attr.phys_port_cnt; ++p) {
            if (s.port && p != s.port) continue;
            ibv_gid gid{};
            if (ibv_query_gid(d.ctx, p, s.gid_index, &gid) != 0) continue;
            static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
            bool v4 = std::memcmp(gid.raw, v4_mapped, sizeof v4_mapped) == 0;
            std::memset(out, 0, sizeof *out);
            if (family == AF_INET && v4) {
                auto *in = reinterpret_cast<sockaddr_in *>(out);
                in->sin_family = AF_INET;
                std::memcpy(&in->sin_addr, gid.raw + 12, 4);
                return true;
            }
            if (family == AF_INET6 && !v4) {
                auto *in6 = reinterpret_cast<sockaddr_in6 *>(out);
                in6->sin6_family = AF_INET6;
                std::memcpy(&in6->sin6_addr, gid.raw, 16);
                return true;
            }
            *why = format("%s port %u GID index %d holds no %s address", d.name.c_str(), p, s.gid_index,
                          family == AF_INET ? "IPv4" : "IPv6");
            return false;
        }
    }
    *why = "no usable device and port for rdma.gid_index";
    return false;
}

} // namespace twrdma
