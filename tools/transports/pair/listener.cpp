// SPDX-License-Identifier: MIT
// Listeners: a name in the process's namespace and a backlog of ends that
// connect() made and accept() hands to a loop.
#include "pair.hpp"

#include <cerrno>
#include <new>

using namespace twpair;

int pair_listen(tw_transport_loop *tl, const tw_listen_params *p, tw_listener **out)
{
    *out = nullptr;
    if (!p || p->size < TW_LISTEN_PARAMS_SIZE_V1 || !p->on_incoming) return -EINVAL;
    if (int rc = check_address(p->addr, p->addrlen); rc < 0) return rc;
    auto *l = new (std::nothrow) tw_listener;
    if (!l) return -ENOMEM;
    l->tloop = tl;
    l->addr = copy_address(p->addr);
    l->flags = p->flags;
    if (p->backlog > 0) l->backlog_max = static_cast<size_t>(p->backlog);
    l->on_incoming = p->on_incoming;
    l->arg = p->arg;
    if (int rc = registry_add_listener(l); rc < 0) {
        delete l;
        return rc;
    }
    *out = l;
    return 0;
}

int pair_accept(tw_listener *l, tw_transport_loop *target, tw_conn **out)
{
    tw_conn *c;
    {
        std::lock_guard<std::mutex> lock(registry_mutex());
        if (l->backlog.empty()) return -EAGAIN;
        c = l->backlog.front();
        l->backlog.pop_front();
    }
    {
        // From now on the other end wakes it on `target`.
        std::lock_guard<std::mutex> lock(c->link->mutex);
        c->tloop = target;
    }
    // Nothing to finish on the target loop: the host's set_callback there
    // delivers TW_EV_CONNECTED and whatever arrived meanwhile.
    c->pending |= TW_EV_CONNECTED;
    l->tloop->transport->accepted++;
    *out = c;
    return 0;
}

int pair_listener_addr(tw_listener *l, sockaddr *addr, uint32_t *addrlen)
{
    return copy_out_address(l->addr, addr, addrlen);
}

void pair_listener_close(tw_listener *l)
{
    std::deque<tw_conn *> waiting;
    {
        std::lock_guard<std::mutex> lock(registry_mutex());
        registry_remove_listener(l);
        waiting.swap(l->backlog);
    }
    forget(l->tloop, l);
    // What still waits is refused: its client sees a reset.
    for (tw_conn *c : waiting) conn_abort_unaccepted(c);
    delete l;
}
