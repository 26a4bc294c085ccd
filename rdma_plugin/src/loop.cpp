// SPDX-License-Identifier: MIT
// Per-loop state: the rdma_cm event channel, completion channels and CQs,
// the tick timer (timeouts, keepalives) and pending delivery.
#include "core.hpp"

#include "report.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace twrdma {

namespace {

/// How often a loop looks for devices gone and back (device_release.cpp).
constexpr uint64_t kDeviceWatchNs = 1000000000ull;

bool set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

void on_cm_ready(tw_watch *, int, uint32_t, void *arg)
{
    auto *l = static_cast<tw_transport_loop *>(arg);
    for (;;) {
        rdma_cm_event *raw = nullptr;
        if (rdma_get_cm_event(l->cm, &raw) != 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                logf(l->t, TW_LOG_ERROR, "%s", call_failed("rdma_get_cm_event", errno).c_str());
            break;
        }
        // Copy what we need and ack at once: rdma_destroy_id and
        // rdma_migrate_id wait for every event of the id to be acked.  The
        // owner is read before: once acked, the id reaper may free the id.
        rdma_cm_event ev = *raw;
        void *owner_ctx = raw->event == RDMA_CM_EVENT_CONNECT_REQUEST ? raw->listen_id->context : raw->id->context;
        unsigned char pdata[256];
        size_t plen = 0;
        if (raw->param.conn.private_data && raw->param.conn.private_data_len) {
            plen = std::min<size_t>(raw->param.conn.private_data_len, sizeof pdata);
            std::memcpy(pdata, raw->param.conn.private_data, plen);
        }
        rdma_ack_cm_event(raw);
        logf(l->t, TW_LOG_TRACE, "cm event %s status %d", rdma_event_str(ev.event), ev.status);
        auto *owner = static_cast<CmOwner *>(owner_ctx);
        if (!owner) {
            // Its owner is gone (a request to a closed listener: refused).
            if (ev.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
                rdma_reject(ev.id, nullptr, 0);
                l->t->reaper.destroy(ev.id);
            }
            continue;
        }
        if (ev.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
            listener_on_cm_event(static_cast<tw_listener *>(owner), ev, plen ? pdata : nullptr, plen);
            continue;
        }
        if (owner->kind == CmKind::Conn)
            conn_on_cm_event(static_cast<tw_conn *>(owner), ev, plen ? pdata : nullptr, plen);
        else if (owner->kind == CmKind::Listener)
            listener_on_cm_event(static_cast<tw_listener *>(owner), ev, plen ? pdata : nullptr, plen);
    }
    reap_now(l);
}

/// A shared receive completed: post its buffer again at once, whoever it
/// was for (credits count on it).  A flushed one too: the queue handed it
/// to a QP that failed, and it is still ours.
void repost(LoopDevice *ld, const ibv_wc &wc)
{
    if (ld->dev->gone) return; // the device is being released with its queues
    int rc = ld->receives->repost(wc.wr_id);
    if (rc)
        logf(ld->loop->t, TW_LOG_ERROR, "%s",
             call_failed("ibv_post_srq_recv", -rc, "the shared receive queue of this loop has one receive less")
                 .c_str());
}

/// Route one completion: a shared receive by its QP (its buffer is posted
/// again whoever it was for), anything else by the serial in its wr_id.
void dispatch(LoopDevice *ld, const ibv_wc &wc, uint64_t now)
{
    tw_transport_loop *l = ld->loop;
    bool shared_recv = static_cast<WrKind>((wc.wr_id >> 24) & 0xff) == WrKind::Recv;
    // A receive names its queue and buffer, not its connection: the QP does.
    tw_conn *c = nullptr;
    if (shared_recv) {
        auto it = ld->qps.find(wc.qp_num);
        if (it != ld->qps.end()) c = it->second;
    } else {
        auto it = l->serials.find(static_cast<uint32_t>(wc.wr_id >> 32));
        if (it != l->serials.end()) c = it->second; // else a QP already destroyed: flushed work
    }
    if (c) {
        if (c->live.cq_generation != l->cq_generation) {
            c->live.cq_generation = l->cq_generation;
            c->stats.cq_events += 1;
        }
        if (shared_recv) conn_on_recv(c, wc, ld->receives->buffer(wc.wr_id), now);
        else conn_on_wc(c, wc, now);
    }
    if (shared_recv) repost(ld, wc);
}

/// The completions cq_settle() took off a CQ for other QPs, handled before
/// anything polled after them (a connection's completions stay in order).
int run_deferred(LoopDevice *ld)
{
    if (ld->deferred.empty()) return 0;
    std::vector<ibv_wc> batch;
    batch.swap(ld->deferred);
    uint64_t now = ld->loop->last_completion_ns = now_ns(ld->loop->t);
    for (const ibv_wc &wc : batch) dispatch(ld, wc, now);
    return static_cast<int>(batch.size());
}

/// Drain `only`, or every CQ of the device: poll in batches until empty.
int drain(LoopDevice *ld, ibv_cq *only = nullptr)
{
    tw_transport_loop *l = ld->loop;
    int total = 0;
    uint64_t now = 0; // one clock read for the batch: completions taken together arrived together
    ibv_wc wcs[32];
    for (auto &slot : ld->cqs) {
        if (only && slot.cq != only) continue;
        for (;;) {
            total += run_deferred(ld);
            int n = ibv_poll_cq(slot.cq, 32, wcs);
            if (n < 0) {
                logf(l->t, TW_LOG_ERROR, "%s", call_failed("ibv_poll_cq", -n).c_str());
                break;
            }
            if (n > 0 && now == 0) now = l->last_completion_ns = now_ns(l->t);
            for (int i = 0; i < n; ++i) dispatch(ld, wcs[i], now);
            total += n;
            if (n < 32) break;
        }
    }
    return total + run_deferred(ld);
}

void on_cq_ready(tw_watch *, int, uint32_t, void *arg)
{
    auto *ld = static_cast<LoopDevice *>(arg);
    tw_transport_loop *l = ld->loop;
    // Completion events are edge-triggered: take the event, ack it, re-arm,
    // then drain (which polls after re-arming).  One event per call: reading
    // until EAGAIN costs a failed read() per wake-up, and the watch is
    // level-triggered, so a second queued event (another CQ) calls us again.
    // Only the CQ that fired is drained: every other one is armed and has
    // an event of its own when it holds completions (thousands of
    // connections spread over many CQs; polling all on each event costs).
    ibv_cq *cq = nullptr;
    void *ctx = nullptr;
    bool fired = ibv_get_cq_event(ld->channel, &cq, &ctx) == 0;
    if (fired) {
        ibv_ack_cq_events(cq, 1);
        int rc = ibv_req_notify_cq(cq, 0);
        if (rc) logf(l->t, TW_LOG_ERROR, "%s", call_failed("ibv_req_notify_cq", rc).c_str());
    }
    l->cq_generation += 1;
    drain(ld, fired ? cq : nullptr);
    reap_now(l);
}

/// Spare rings that connections asked for: registered here, from a timer,
/// never inside a connection's operation or completion.
void refill_pools(tw_transport_loop *l, uint64_t now)
{
    for (auto &ld : l->devs) {
        if (!ld->pool) continue;
        std::string why = ld->pool->refill(now);
        if (!why.empty()) logf(l->t, TW_LOG_WARN, "%s", why.c_str());
    }
}

void on_refill(tw_timer *, void *arg)
{
    auto *l = static_cast<tw_transport_loop *>(arg);
    l->refill_armed = false;
    refill_pools(l, now_ns(l->t));
}

void on_device_watch(tw_timer *, void *arg) { device_watch(static_cast<tw_transport_loop *>(arg)); }

void on_tick(tw_timer *, void *arg)
{
    auto *l = static_cast<tw_transport_loop *>(arg);
    uint64_t now = now_ns(l->t);
    // conn_tick may fail a connection, never free it (reaping comes after).
    // Up to kTickSlice connections each tick, all of them; past that a
    // tenth, so each is seen at least once a second and the loop never
    // stops for a walk over thousands of idle ones.
    constexpr size_t kTickSlice = 1024;
    const size_t n = l->conns.size();
    const size_t slice = std::max(kTickSlice, n / 10 + 1);
    if (slice >= n) {
        for (size_t i = 0; i < n; ++i) conn_tick(l->conns[i], now);
        l->tick_cursor = 0;
    } else {
        for (size_t k = 0; k < slice; ++k) {
            if (l->tick_cursor >= l->conns.size()) l->tick_cursor = 0;
            conn_tick(l->conns[l->tick_cursor++], now);
        }
    }
    reap_now(l);
    // Spare rings: dropped after an idle period (all, once no connection
    // is left).
    refill_pools(l, now);
    for (auto &ld : l->devs)
        if (ld->pool) ld->pool->trim(now, l->conns.empty() ? 0 : uint64_t(l->t->cfg.ring_idle_ms) * 1000000ull);
    if (l->conns.empty() && l->tick_armed) {
        l->host->timer_disarm(l->tick);
        l->tick_armed = false;
    }
}

} // namespace

void cq_settle(LoopDevice *ld, int slot, uint32_t qp_num)
{
    if (slot < 0 || static_cast<size_t>(slot) >= ld->cqs.size()) return;
    ibv_wc wcs[32];
    for (;;) {
        int n = ibv_poll_cq(ld->cqs[static_cast<size_t>(slot)].cq, 32, wcs);
        for (int i = 0; i < n; ++i) {
            if (wcs[i].qp_num != qp_num) ld->deferred.push_back(wcs[i]);
            else if (static_cast<WrKind>((wcs[i].wr_id >> 24) & 0xff) == WrKind::Recv) repost(ld, wcs[i]);
        }
        if (n < 32) break;
    }
}

void refill_soon(tw_transport_loop *l)
{
    if (l->refill_armed || !l->refill) return;
    // One-shot, as soon as the loop is back from the operation that asked.
    if (l->host->timer_arm(l->refill, 1, 0) == 0) l->refill_armed = true;
}

void ensure_tick(tw_transport_loop *l)
{
    if (l->tick_armed || !l->tick) return;
    const Settings &s = l->t->cfg;
    uint64_t period_ms = std::min<uint64_t>(100, std::max<uint64_t>(5, s.keepalive_ms / 4));
    if (l->host->timer_arm(l->tick, period_ms * 1000000ull, period_ms * 1000000ull) == 0) l->tick_armed = true;
}

int loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out)
{
    auto l = std::make_unique<tw_transport_loop>();
    l->t = t;
    l->loop = loop;
    l->host = t->host;
    l->cm = rdma_create_event_channel();
    if (!l->cm) {
        int err = errno;
        logf(t, TW_LOG_ERROR, "%s", call_failed("rdma_create_event_channel", err).c_str());
        return -err;
    }
    int rc = set_nonblock(l->cm->fd) ? 0 : -errno;
    if (!rc) rc = t->host->watch_add(loop, l->cm->fd, TW_WATCH_READ, on_cm_ready, l.get(), &l->cm_watch);
    if (!rc) rc = t->host->timer_add(loop, on_tick, l.get(), &l->tick);
    if (!rc) rc = t->host->timer_add(loop, on_refill, l.get(), &l->refill);
    if (!rc) rc = t->host->timer_add(loop, on_device_watch, l.get(), &l->device_watch);
    if (!rc) rc = t->host->timer_arm(l->device_watch, kDeviceWatchNs, kDeviceWatchNs);
    if (rc) {
        if (l->device_watch) t->host->timer_del(l->device_watch);
        if (l->refill) t->host->timer_del(l->refill);
        if (l->tick) t->host->timer_del(l->tick);
        if (l->cm_watch) t->host->watch_del(l->cm_watch);
        rdma_destroy_event_channel(l->cm);
        return rc;
    }
    {
        std::lock_guard<std::mutex> lock(t->devices.mutex());
        t->loops.push_back(l.get());
    }
    twrdma::watch_device_events(l.get());
    // Pre-register the pool of a device the configuration pins down.
    if (!t->cfg.device.empty()) {
        for (Device *d : t->devices.all()) {
            std::string why;
            if (d->usable && !d->gone && !loop_device(l.get(), d, &why))
                logf(t, TW_LOG_WARN, "loop %u: %s", t->host->loop_index(loop), why.c_str());
        }
    }
    *out = l.release();
    return 0;
}

LoopDevice *loop_device(tw_transport_loop *l, Device *dev, std::string *why)
{
    for (auto &ld : l->devs)
        if (ld->dev == dev) return ld.get();
    if (dev->gone) {
        *why = format("RDMA device %s went; hint: it is used again once it is back (`rdma link`)", dev->name.c_str());
        return nullptr;
    }
    auto ld = std::make_unique<LoopDevice>();
    ld->loop = l;
    ld->dev = dev;
    ld->channel = ibv_create_comp_channel(dev->ctx);
    if (!ld->channel) {
        *why = call_failed("ibv_create_comp_channel", errno);
        return nullptr;
    }
    if (!set_nonblock(ld->channel->fd) ||
        l->host->watch_add(l->loop, ld->channel->fd, TW_WATCH_READ, on_cq_ready, ld.get(), &ld->watch) != 0) {
        *why = call_failed("watch completion channel", errno);
        ibv_destroy_comp_channel(ld->channel);
        return nullptr;
    }
    ld->pool = std::make_unique<Pool>(*dev, l->t->cfg, l->t->counters);
    if (ld->pool->prime(why) != 0) {
        l->host->watch_del(ld->watch);
        ibv_destroy_comp_channel(ld->channel);
        return nullptr;
    }
    ld->receives = std::make_unique<SharedReceives>(*dev, *ld->pool, l->t->counters);
    l->devs.push_back(std::move(ld));
    return l->devs.back().get();
}

int cq_reserve(LoopDevice *ld, int entries, std::string *why)
{
    for (size_t i = 0; i < ld->cqs.size(); ++i)
        if (ld->cqs[i].capacity - ld->cqs[i].used >= entries) {
            ld->cqs[i].used += entries;
            return static_cast<int>(i);
        }
    int max_cqe = ld->dev->attr.max_cqe > 0 ? ld->dev->attr.max_cqe : 4096;
    // The first small (a device may pin it against RLIMIT_MEMLOCK), later
    // ones large: fewer CQs with thousands of connections.
    int size = std::min(max_cqe, std::max(ld->cqs.empty() ? 8192 : 32768, entries * 2));
    ibv_cq *cq = ibv_create_cq(ld->dev->ctx, size, nullptr, ld->channel, 0);
    if (!cq) {
        *why = call_failed("ibv_create_cq", errno);
        return -1;
    }
    int rc = ibv_req_notify_cq(cq, 0);
    if (rc) {
        *why = call_failed("ibv_req_notify_cq", rc);
        ibv_destroy_cq(cq);
        return -1;
    }
    CqSlot slot;
    slot.cq = cq;
    // A quarter stays free for the flushed completions of QPs being destroyed.
    slot.capacity = cq->cqe * 3 / 4;
    if (slot.capacity < entries) {
        *why = format("ibv_create_cq: device gives %d entries, a connection needs %d; hint: lower rdma.sq_depth "
                      "or rdma.recv_depth",
                      cq->cqe, entries);
        ibv_destroy_cq(cq);
        return -1;
    }
    slot.used = entries;
    ld->cqs.push_back(slot);
    return static_cast<int>(ld->cqs.size() - 1);
}

void cq_release(LoopDevice *ld, int slot, int entries)
{
    if (slot >= 0 && static_cast<size_t>(slot) < ld->cqs.size()) ld->cqs[static_cast<size_t>(slot)].used -= entries;
}

void reap_now(tw_transport_loop *l)
{
    if (!l->reap.empty()) {
        std::vector<tw_conn *> dead;
        dead.swap(l->reap);
        l->ready.erase(std::remove_if(l->ready.begin(), l->ready.end(), [](tw_conn *c) { return reached(c, kReaped); }),
                       l->ready.end());
        for (tw_conn *c : dead) conn_delete(c);
    }
    if (!l->dead_listeners.empty()) {
        std::vector<tw_listener *> dead;
        dead.swap(l->dead_listeners);
        for (tw_listener *ls : dead) delete ls;
    }
}

void loop_device_destroy(tw_transport_loop *l, LoopDevice *ld)
{
    // Every QP on it is gone: the CQs, the pool and the channel can go.
    if (ld->watch) l->host->watch_del(ld->watch);
    ld->watch = nullptr;
    ld->receives.reset();
    ld->pool.reset();
    for (auto &slot : ld->cqs) {
        int rc = ibv_destroy_cq(slot.cq);
        if (rc) logf(l->t, TW_LOG_WARN, "%s", call_failed("ibv_destroy_cq", rc).c_str());
    }
    ld->cqs.clear();
    if (ld->channel) ibv_destroy_comp_channel(ld->channel);
    ld->channel = nullptr;
    auto &devs = l->devs;
    devs.erase(std::remove_if(devs.begin(), devs.end(), [ld](const auto &p) { return p.get() == ld; }), devs.end());
}

void loop_detach(tw_transport_loop *l)
{
    // Every connection was closed by the host; lingering ones end now.
    std::vector<tw_conn *> all(l->conns.begin(), l->conns.end());
    for (tw_conn *c : all) {
        if (c->state != ConnState::Finished) conn_teardown(c);
        if (!reached(c, kReaped)) {
            mark_reached(c, kReaped);
            l->reap.push_back(c);
        }
    }
    for (tw_listener *ls : std::vector<tw_listener *>(l->listeners)) listener_close(ls);
    reap_now(l);
    const tw_host *h = l->host;
    if (l->tick) h->timer_del(l->tick);
    if (l->refill) h->timer_del(l->refill);
    if (l->device_watch) h->timer_del(l->device_watch);
    if (l->cm_watch) h->watch_del(l->cm_watch);
    // A device being released waits for this loop no more (the last one
    // out releases it).
    for (Device *d : l->t->devices.all())
        if (d->gone && !d->released) loop_release_device(l, d);
    twrdma::unwatch_device_events(l);
    while (!l->devs.empty()) loop_device_destroy(l, l->devs.back().get());
    {
        std::lock_guard<std::mutex> lock(l->t->devices.mutex());
        auto &loops = l->t->loops;
        loops.erase(std::remove(loops.begin(), loops.end(), l), loops.end());
    }
    // The ids of this channel must be gone before it; one stuck in the
    // kernel keeps the channel (a few bytes) for good.
    if (l->cm && l->t->reaper.wait_channel(l->cm, std::chrono::seconds(5))) rdma_destroy_event_channel(l->cm);
    else if (l->cm)
        logf(l->t, TW_LOG_WARN, "loop detached with an rdma_cm id stuck in the kernel; its event channel stays");
    delete l;
}

int has_pending(tw_transport_loop *l)
{
    auto &r = l->ready;
    r.erase(std::remove_if(r.begin(), r.end(),
                           [](tw_conn *c) {
                               if (deliverable(c) || c->host.pump_due) return false;
                               c->host.in_ready = false;
                               return true;
                           }),
            r.end());
    if (!r.empty() || !l->reap.empty()) return 1;
    for (auto &ld : l->devs)
        if (!ld->deferred.empty()) return 1;
    for (tw_listener *ls : l->listeners)
        if (!ls->closed && !ls->queue.empty()) return 1;
    uint32_t busy_us = l->t->cfg.busy_poll_us;
    if (busy_us && !l->conns.empty() && now_ns(l->t) - l->last_completion_ns < busy_us * 1000ull) return 1;
    return 0;
}

int process_pending(tw_transport_loop *l)
{
    for (auto &ld : l->devs) run_deferred(ld.get());
    uint32_t busy_us = l->t->cfg.busy_poll_us;
    if (busy_us && !l->conns.empty() && now_ns(l->t) - l->last_completion_ns < busy_us * 1000ull) {
        // Busy polling: take completions without waiting for the channel.
        l->cq_generation += 1;
        for (auto &ld : l->devs) drain(ld.get());
    }
    int called = 0;
    // By index, without a copy per turn: callbacks may add to both lists
    // (served in this pass) or close a listener (one entry may then wait for
    // the next turn); nothing is freed before reap_now() below.
    for (size_t i = 0; i < l->listeners.size(); ++i) {
        tw_listener *ls = l->listeners[i];
        if (!ls->closed && !ls->queue.empty() && ls->on_incoming) {
            ls->on_incoming(ls, ls->arg);
            ++called;
        }
    }
    for (size_t i = 0; i < l->ready.size(); ++i) {
        tw_conn *c = l->ready[i];
        if (reached(c, kReaped)) continue;
        if (reached(c, kHostClosed) || !deliverable(c)) {
            pump_if_due(c); // deferred for a callback that is not coming
            continue;
        }
        deliver(c);
        ++called;
    }
    reap_now(l);
    return called;
}

} // namespace twrdma
