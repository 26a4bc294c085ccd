// SPDX-License-Identifier: MIT
// Events without file descriptors: each loop's active list, drained by the
// host through has_pending_data / process_pending_data, and the inbox that
// other loops' threads wake it through (one run_in_loop task per batch,
// never a busy wait).  READ and WRITE are level-triggered: an item whose
// condition still holds after its callback is queued again for the next
// turn of the loop.
#include "pair.hpp"

#include <cstdint>

namespace twpair {
namespace {

void drain_inbox(void *arg)
{
    // The loop may have detached since the task was posted: look it up.
    tw_transport_loop *tl = registry_find_loop(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(arg)));
    if (!tl) return;
    std::vector<Waitable *> batch;
    {
        std::lock_guard<std::mutex> lock(tl->inbox_mutex);
        batch.swap(tl->inbox);
        for (Waitable *w : batch) w->in_inbox = false;
        tl->task_posted = false;
    }
    // Closing happens on this thread, so every item is still alive here.
    for (Waitable *w : batch) mark_active(tl, w);
}

bool listener_waiting(tw_listener *l)
{
    std::lock_guard<std::mutex> lock(registry_mutex());
    return !l->backlog.empty();
}

/// One turn for one listener or connection; false when its callback closed it.
bool deliver(tw_transport_loop *tl, Waitable *w)
{
    tl->delivering = w;
    if (w->kind == Waitable::Kind::Listener) {
        auto *l = static_cast<tw_listener *>(w);
        if (!listener_waiting(l)) return true;
        l->on_incoming(l, l->arg);
        if (tl->delivering != w) return false;
        if (listener_waiting(l)) mark_active(tl, w);
        return true;
    }
    auto *c = static_cast<tw_conn *>(w);
    if (c->up) { // a reset by the other end becomes TW_EV_ERROR in this same turn
        std::lock_guard<std::mutex> lock(c->link->mutex);
        conn_sync(c);
    }
    uint32_t events = c->pending;
    c->pending = 0;
    if (events & TW_EV_CONNECTED) c->up = true;
    if (c->up) {
        std::lock_guard<std::mutex> lock(c->link->mutex);
        events |= conn_readiness(c) & c->interest;
    }
    if (!events) return true;
    c->cb(c, events, c->arg); // may close c
    if (tl->delivering != w) return false;
    bool again = c->pending != 0;
    if (!again && c->up) {
        std::lock_guard<std::mutex> lock(c->link->mutex);
        again = (conn_readiness(c) & c->interest) != 0;
    }
    if (again) mark_active(tl, w);
    return true;
}

} // namespace

void mark_active(tw_transport_loop *tl, Waitable *w)
{
    if (w->queued) return;
    // Rule 1: a connection without a callback waits for set_callback.
    if (w->kind == Waitable::Kind::Conn && !static_cast<tw_conn *>(w)->cb) return;
    w->queued = true;
    w->prev = tl->tail;
    w->next = nullptr;
    if (tl->tail) tl->tail->next = w;
    else tl->head = w;
    tl->tail = w;
}

void unmark_active(tw_transport_loop *tl, Waitable *w)
{
    if (!w->queued) return;
    if (w->prev) w->prev->next = w->next;
    else tl->head = w->next;
    if (w->next) w->next->prev = w->prev;
    else tl->tail = w->prev;
    w->prev = w->next = nullptr;
    w->queued = false;
}

void wake(Waitable *w, tw_transport_loop *target, tw_transport_loop *current)
{
    if (!target) return; // not on a loop yet: set_callback looks at everything
    if (target == current) {
        mark_active(target, w);
        return;
    }
    bool post;
    {
        std::lock_guard<std::mutex> lock(target->inbox_mutex);
        if (!w->in_inbox) {
            w->in_inbox = true;
            target->inbox.push_back(w);
        }
        post = !target->task_posted;
        target->task_posted = true;
    }
    if (!post) return;
    const tw_host *host = target->transport->host;
    // -ESHUTDOWN: the loop is stopping and will not deliver anything more.
    host->run_in_loop(target->loop, drain_inbox, reinterpret_cast<void *>(static_cast<uintptr_t>(target->id)));
}

void forget(tw_transport_loop *tl, Waitable *w)
{
    if (!tl) return;
    unmark_active(tl, w);
    if (tl->delivering == w) tl->delivering = nullptr;
    std::lock_guard<std::mutex> lock(tl->inbox_mutex);
    if (!w->in_inbox) return;
    for (size_t i = 0; i < tl->inbox.size(); i++)
        if (tl->inbox[i] == w) {
            tl->inbox.erase(tl->inbox.begin() + static_cast<long>(i));
            break;
        }
    w->in_inbox = false;
}

} // namespace twpair

using namespace twpair;

int pair_has_pending_data(tw_transport_loop *tl) { return tl->head != nullptr; }

int pair_process_pending_data(tw_transport_loop *tl)
{
    // One pass over what is queued now; what is queued meanwhile (by a
    // callback, or again because it still holds) waits for the next turn.
    size_t n = 0;
    for (Waitable *w = tl->head; w; w = w->next) n++;
    int called = 0;
    while (n-- > 0 && tl->head) {
        Waitable *w = tl->head;
        unmark_active(tl, w);
        deliver(tl, w);
        called++;
    }
    tl->delivering = nullptr;
    return called;
}
