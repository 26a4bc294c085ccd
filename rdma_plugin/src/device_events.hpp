// SPDX-License-Identifier: MIT
// A device's asynchronous events (ibv_get_async_event): its port going down
// and coming back, a fatal error.  rdma_cm says nothing of a port that goes
// down, and a connection only learns it when its keepalive times out; the
// device's own events say it at once.  One loop reads each device's events
// (the first attached); describe shows what they said.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <string>

struct tw_transport;
struct tw_transport_loop;
struct tw_watch;

namespace twrdma {

struct Device;

/// A loop's reading of one device's events (the argument of its watch).
struct EventReading {
    tw_transport_loop *l;
    Device *dev;
};

/// What a device's events said, read by one loop, shown from any thread.
struct DeviceEvents {
    std::atomic<int> port_state{IBV_PORT_NOP};        ///< of Device::port, as last reported
    std::atomic<uint64_t> port_down{0};               ///< IBV_EVENT_PORT_ERR
    std::atomic<uint64_t> port_up{0};                 ///< IBV_EVENT_PORT_ACTIVE
    std::atomic<uint64_t> fatal{0};                   ///< IBV_EVENT_DEVICE_FATAL
    std::atomic<uint64_t> other{0};                   ///< every other event (a QP's, a CQ's, a GID's)
    std::atomic<tw_transport_loop *> reader{nullptr}; ///< the loop that reads them
    tw_watch *watch = nullptr;                        ///< the reader's watch on the async fd
};

/// loop_attach: read the events of every device no loop reads yet.
void watch_device_events(tw_transport_loop *l);
/// loop_detach: stop reading the devices this loop reads.
void unwatch_device_events(tw_transport_loop *l);
/// The device goes: stop reading its events if this loop reads them.
void stop_device_events(tw_transport_loop *l, Device *d);
/// "port 1 ACTIVE; events: port down 1, up 1, fatal 0" for describe.
std::string device_events_text(const Device &d);

} // namespace twrdma
