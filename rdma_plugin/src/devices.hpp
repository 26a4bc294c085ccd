// SPDX-License-Identifier: MIT
// The RDMA devices rdma_cm knows, with one protection domain each.
#pragma once

#include "device_events.hpp"
#include "settings.hpp"

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <memory>
#include <string>
#include <vector>

namespace twrdma {

struct Device {
    ibv_context *ctx = nullptr; ///< shared with rdma_cm (cm_id->verbs points here)
    ibv_pd *pd = nullptr;       ///< the process's one PD for this device
    std::string name;
    ibv_device_attr attr{};
    bool usable = false; ///< has an ACTIVE port and matches rdma.device
    std::string why_unusable;
    uint8_t port = 0; ///< the ACTIVE port found at start (0: none)
    /// What its asynchronous events said (device_events.cpp); shared by the copies of this entry.
    std::shared_ptr<DeviceEvents> events = std::make_shared<DeviceEvents>();
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
    /// The device behind a cm_id (nullptr when unknown).
    Device *find(const ibv_context *ctx);
    const std::vector<Device> &all() const { return devices_; }
    /// "rxe0 (port 1 ACTIVE, mtu 1024)" lines for describe().
    std::string describe() const;
    /// The address held by GID rdma.gid_index of the first usable device
    /// (and port), as a source address of `family` (port 0).  False with
    /// *why when that GID carries no address of the family.
    bool gid_source(const Settings &s, int family, sockaddr_storage *out, std::string *why) const;

private:
    ibv_context **list_ = nullptr;
    std::vector<Device> devices_;
};

/// Write the probe text (devices, ports, state, MTU, GIDs) into `out`.
std::string probe_devices();
/// "ACTIVE", "DOWN", ...
const char *port_state_name(ibv_port_state state);

} // namespace twrdma
