// SPDX-License-Identifier: MIT
// The RDMA devices rdma_cm knows, with one protection domain each.
#pragma once

#include "device_events.hpp"
#include "settings.hpp"

#include <infiniband/verbs.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct tw_transport_loop;

namespace twrdma {

struct Device {
    ibv_context *ctx = nullptr; ///< shared with rdma_cm (cm_id->verbs points here); never read once gone
    ibv_pd *pd = nullptr;       ///< the process's one PD for this device
    std::string name;
    ibv_device_attr attr{};
    bool usable = false; ///< has an ACTIVE port and matches rdma.device
    std::string why_unusable;
    uint8_t port = 0; ///< the ACTIVE port found at start (0: none)
    /// What its asynchronous events said (device_events.cpp).
    std::shared_ptr<DeviceEvents> events = std::make_shared<DeviceEvents>();
    /// Its uverbs node in sysfs (ibv_device::dev_path) and that node's
    /// inode: the node goes first when the device is deleted.
    std::string dev_path;
    ino_t dev_ino = 0;
    /// The device was removed or failed (device_release.cpp): nothing new
    /// starts on it, and every loop releases what it holds of it.
    std::atomic<bool> gone{false};
    /// Set once the last loop let go and the PD and context were released.
    std::atomic<bool> released{false};
    std::string gone_why;                     ///< under Devices::mutex()
    uint64_t gone_ns = 0, released_ns = 0;    ///< under Devices::mutex()
    std::vector<tw_transport_loop *> holders; ///< loops yet to release it (under Devices::mutex())
};

class Devices {
public:
    Devices() = default;
    ~Devices();
    Devices(const Devices &) = delete;
    Devices &operator=(const Devices &) = delete;

    /// List devices through rdma_cm, keep the usable ones, allocate PDs.
    /// Returns 0, -TW_ENODEVICE or -TW_EPORTDOWN (reason in *why).
    int open(const Settings &settings, std::string *why);
    /// The live device behind a cm_id.  One rdma_cm opened since (a device
    /// added again) is taken in on the way.  nullptr when none.
    Device *find(const ibv_context *ctx);
    /// Every device known, gone ones included (entries live as long as the
    /// transport: pointers stay valid).
    std::vector<Device *> all() const;
    /// The device (gone or not, unless released) whose context is `ctx`.
    Device *of(const ibv_context *ctx);
    /// Take the list rdma_cm has now: devices added since are opened, and
    /// rdma_cm may close those we released (the old list held them).
    void refresh();
    /// The last loop let go of `d` (gone): deallocate its PD, then let
    /// rdma_cm close its context.
    void release(Device *d, uint64_t now_ns);
    /// Guards the device list and the fields marked so.
    std::mutex &mutex() const { return mutex_; }
    /// "rxe0 (port 1 ACTIVE, mtu 1024)" lines for describe().
    std::string describe() const;
    /// The address held by GID rdma.gid_index of the first usable device
    /// (and port), as a source address of `family` (port 0).  False with
    /// *why when that GID carries no address of the family.
    bool gid_source(const Settings &s, int family, sockaddr_storage *out, std::string *why) const;

private:
    /// Fill in one device of rdma_cm's list (its port, its PD).
    void add(ibv_context *ctx, std::string *down);
    void refresh_locked();

    mutable std::mutex mutex_;
    const Settings *settings_ = nullptr;
    ibv_context **list_ = nullptr;
    std::vector<ibv_context **> retained_; ///< older lists, kept while a removed device is being released
    std::vector<std::unique_ptr<Device>> devices_;
};

/// Write the probe text (devices, ports, state, MTU, GIDs) into `out`.
std::string probe_devices();
/// "ACTIVE", "DOWN", ...
const char *port_state_name(ibv_port_state state);

} // namespace twrdma
