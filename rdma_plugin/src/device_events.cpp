// SPDX-License-Identifier: MIT
#include "device_events.hpp"

#include "core.hpp"
#include "report.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>

namespace twrdma {
namespace {

void on_event(tw_transport_loop *l, Device &d, const ibv_async_event &ev)
{
    tw_transport *t = l->t;
    DeviceEvents &e = *d.events;
    switch (ev.event_type) {
    case IBV_EVENT_PORT_ERR:
        if (d.port && ev.element.port_num != d.port) break;
        e.port_state = IBV_PORT_DOWN;
        e.port_down++;
        logf(t, TW_LOG_WARN,
             "RDMA device %s port %d went down (IBV_EVENT_PORT_ERR); hint: its connections fail within "
             "rdma.keepalive_ms unless the link comes back (`ip link`, `rdma link`)",
             d.name.c_str(), ev.element.port_num);
        return;
    case IBV_EVENT_PORT_ACTIVE:
        if (d.port && ev.element.port_num != d.port) break;
        e.port_state = IBV_PORT_ACTIVE;
        e.port_up++;
        logf(t, TW_LOG_INFO, "RDMA device %s port %d is ACTIVE again (IBV_EVENT_PORT_ACTIVE)", d.name.c_str(),
             ev.element.port_num);
        return;
    case IBV_EVENT_DEVICE_FATAL:
        e.fatal++;
        logf(t, TW_LOG_ERROR,
             "RDMA device %s failed (IBV_EVENT_DEVICE_FATAL); hint: its connections end with errors; the device "
             "needs a reset or its driver reloading",
             d.name.c_str());
        device_lost(l, &d, "IBV_EVENT_DEVICE_FATAL");
        return;
    case IBV_EVENT_SRQ_ERR:
        // The loop's shared receive queue broke: its connections get no
        // more receives and end with errors; new ones take another queue.
        e.other++;
        logf(t, TW_LOG_ERROR,
             "RDMA device %s: a shared receive queue failed (IBV_EVENT_SRQ_ERR); hint: its connections end with "
             "errors; check the device's logs (dmesg)",
             d.name.c_str());
        return;
    default:
        break;
    }
    e.other++;
    logf(t, TW_LOG_DEBUG, "RDMA device %s: %s", d.name.c_str(), ibv_event_type_str(ev.event_type));
}

void on_async_ready(tw_watch *, int, uint32_t, void *arg)
{
    auto *r = static_cast<EventReading *>(arg);
    tw_transport_loop *l = r->l;
    Device *d = r->dev;
    ibv_async_event ev;
    // The fd is non-blocking: read until it is empty, acknowledging each
    // event at once (destroying a QP or CQ waits for its events' acks).
    // A fatal event releases the device, and `r` with it: stop there.
    while (!d->gone && ibv_get_async_event(d->ctx, &ev) == 0) {
        ibv_ack_async_event(&ev);
        on_event(l, *d, ev);
    }
    int err = errno; // before reap_now, which may set it
    reap_now(l);
    if (d->gone || err == EAGAIN || err == EWOULDBLOCK) return;
    // A device that went away may leave the fd readable for good: a
    // level-triggered watch would spin, so this device is no longer read.
    DeviceEvents &e = *d->events;
    if (e.watch) l->host->watch_set(e.watch, 0);
    logf(l->t, TW_LOG_WARN, "RDMA device %s: its events are no longer followed: %s", d->name.c_str(),
         call_failed("ibv_get_async_event", err).c_str());
}

} // namespace

void watch_device_events(tw_transport_loop *l)
{
    for (Device *d : l->t->devices.all()) {
        Device &dev = *d;
        DeviceEvents &e = *dev.events;
        tw_transport_loop *none = nullptr;
        if (!dev.ctx || dev.gone || !e.reader.compare_exchange_strong(none, l)) continue;
        int flags = fcntl(dev.ctx->async_fd, F_GETFL);
        auto reading = std::make_unique<EventReading>(EventReading{l, &dev});
        if (flags < 0 || fcntl(dev.ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
            l->host->watch_add(l->loop, dev.ctx->async_fd, TW_WATCH_READ, on_async_ready, reading.get(), &e.watch) !=
                0) {
            logf(l->t, TW_LOG_WARN, "RDMA device %s: its events (port down, port active) are not followed: %s",
                 dev.name.c_str(), call_failed("watch the async event fd", errno).c_str());
            e.reader = nullptr;
            continue;
        }
        l->event_readers.push_back(std::move(reading));
    }
}

void stop_device_events(tw_transport_loop *l, Device *d)
{
    DeviceEvents &e = *d->events;
    if (e.reader != l) return;
    if (e.watch) l->host->watch_del(e.watch);
    e.watch = nullptr;
    auto &readers = l->event_readers;
    readers.erase(std::remove_if(readers.begin(), readers.end(), [d](const auto &r) { return r->dev == d; }),
                  readers.end());
    // Not handed back (reader stays set): nobody reads a gone device again.
}

void unwatch_device_events(tw_transport_loop *l)
{
    for (Device *d : l->t->devices.all()) {
        DeviceEvents &e = *d->events;
        if (e.reader != l) continue;
        if (e.watch) l->host->watch_del(e.watch);
        e.watch = nullptr;
        e.reader = nullptr;
    }
    l->event_readers.clear();
}

std::string device_events_text(const Device &d)
{
    const DeviceEvents &e = *d.events;
    std::string port = d.port ? format("port %u %s", d.port, port_state_name(ibv_port_state(e.port_state.load())))
                              : std::string("no port in use");
    return format("%s; events: port down %llu, up %llu, fatal %llu", port.c_str(),
                  static_cast<unsigned long long>(e.port_down.load()),
                  static_cast<unsigned long long>(e.port_up.load()), static_cast<unsigned long long>(e.fatal.load()));
}

} // namespace twrdma
