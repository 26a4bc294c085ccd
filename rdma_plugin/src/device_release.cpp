// SPDX-License-Identifier: MIT
// Devices that go and come back.  rdma_cm tells each id on a removed device
// (DEVICE_REMOVAL), the device's events tell a fatal error, and its uverbs
// node leaving sysfs tells a deletion no id of ours saw.  Every loop then
// lets go of what it holds on the device: the kernel finishes
// `rdma link delete` only once the process has closed the device (rxe
// cannot take a live context away), and librdmacm closes it only once no
// id and no device list of ours names it.  A device added again is opened
// on first use (Devices::find); suspended listeners listen again.
#include "core.hpp"

#include "report.hpp"
#include "rma.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace twrdma {

namespace {

bool on_device(const tw_conn *c, const Device *d)
{
    if (c->res.ldev && c->res.ldev->dev == d) return true;
    // Still resolving, or queued in a listener: an id without a QP.
    return c->res.id && c->res.id->verbs == d->ctx;
}

/// The device's uverbs node left sysfs (or is another device's now).
bool node_gone(const Device &d)
{
    if (d.dev_path.empty()) return false;
    struct stat st {};
    if (stat(d.dev_path.c_str(), &st) != 0) return errno == ENOENT;
    return d.dev_ino && st.st_ino != d.dev_ino;
}

bool holds(tw_transport_loop *l, Device *d)
{
    std::lock_guard<std::mutex> lock(l->t->devices.mutex());
    return std::find(d->holders.begin(), d->holders.end(), l) != d->holders.end();
}

} // namespace

void conn_lose_device(tw_conn *c, const std::string &why)
{
    if (c->state != ConnState::Finished && c->listener) {
        listener_drop_queued(c->listener, c, "its device went");
        return;
    }
    conn_fail(c, -ENODEV, c->peer_text + ": " + why);
    if (c->state != ConnState::Finished) {
        // The bytes that arrived stay readable: copied out of the ring the
        // device registered.
        uint64_t unread = c->rx.tail - c->rx.head;
        if (unread && c->rx.salvage.empty()) {
            std::vector<uint8_t> copy(unread);
            for (uint64_t done = 0; done < unread;) {
                uint64_t n = 0;
                const uint8_t *at = rx_span(c, c->rx.head + done, &n, unread - done);
                std::memcpy(copy.data() + done, at, n);
                done += n;
            }
            c->rx.salvage.swap(copy);
            c->rx.salvage_base = c->rx.head;
        }
        rma_forget_device(c);
        conn_teardown(c);
    }
    c->res.ldev = nullptr;
    mark_ready(c);
}

void loop_release_device(tw_transport_loop *l, Device *d)
{
    tw_transport *t = l->t;
    if (!holds(l, d)) return;
    // What the host borrowed (received bytes, a send buffer) points into the
    // pool: released once it is back (the device watch calls again).
    for (tw_conn *c : l->conns)
        if (on_device(c, d) && (c->rx.borrowed || c->tx.sendbuf_out)) return;
    std::string why;
    {
        std::lock_guard<std::mutex> lock(t->devices.mutex());
        why = format("RDMA device %s went (%s); hint: it is used again once it is back (`rdma link`)", d->name.c_str(),
                     d->gone_why.c_str());
    }
    // conn_lose_device may queue connections for reaping, never frees them.
    std::vector<tw_conn *> all(l->conns.begin(), l->conns.end());
    for (tw_conn *c : all)
        if (on_device(c, d)) conn_lose_device(c, why);
    for (tw_listener *ls : std::vector<tw_listener *>(l->listeners))
        if (ls->id && ls->id->verbs == d->ctx) listener_suspend(ls, why);
    stop_device_events(l, d);
    for (size_t i = 0; i < l->devs.size(); ++i)
        if (l->devs[i]->dev == d) loop_device_destroy(l, l->devs[i--].get());
    bool last = false;
    {
        std::lock_guard<std::mutex> lock(t->devices.mutex());
        d->holders.erase(std::remove(d->holders.begin(), d->holders.end(), l), d->holders.end());
        last = d->holders.empty();
    }
    if (!last) return;
    uint64_t now = now_ns(t);
    t->devices.release(d, now);
    logf(t, TW_LOG_INFO, "RDMA device %s released: no verbs object of this process is left on it", d->name.c_str());
}

void device_lost(tw_transport_loop *l, Device *d, const std::string &why)
{
    tw_transport *t = l->t;
    bool first = false;
    {
        std::lock_guard<std::mutex> lock(t->devices.mutex());
        if (!d->gone.exchange(true)) {
            first = true;
            d->gone_why = why;
            d->gone_ns = now_ns(t);
            d->holders = t->loops;
        }
    }
    if (first)
        logf(t, TW_LOG_WARN,
             "RDMA device %s went (%s): its connections fail with ENODEV and its listeners wait for it; the "
             "transport lets go of it so that it can be deleted, and uses it again once it is back",
             d->name.c_str(), why.c_str());
    loop_release_device(l, d);
}

void device_watch(tw_transport_loop *l)
{
    tw_transport *t = l->t;
    for (Device *d : t->devices.all()) {
        if (!d->gone && node_gone(*d))
            device_lost(l, d, "its node " + d->dev_path + " left sysfs: deleted, or its driver unloaded");
        else if (d->gone && !d->released) loop_release_device(l, d);
    }
    for (tw_listener *ls : std::vector<tw_listener *>(l->listeners))
        if (ls->suspended && !ls->closed) listener_relisten(ls);
    watch_device_events(l); // a device added again
    reap_now(l);
}

} // namespace twrdma
