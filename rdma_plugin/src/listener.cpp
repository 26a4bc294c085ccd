// SPDX-License-Identifier: MIT
// Listeners: rdma_listen on the listener's loop, CONNECT_REQUESTs validated
// and queued, accept() hands one to a target loop (rdma_migrate_id) where
// the handshake finishes.
#include "core.hpp"

#include "report.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace twrdma {

namespace {

void reject(rdma_cm_id *id, RejectReason reason, const std::string &text)
{
    WireReject rej = reject_make(reason, text);
    rdma_reject(id, &rej, sizeof rej);
}

std::string peer_of(rdma_cm_id *id) { return sockaddr_text(rdma_get_peer_addr(id)); }

void on_request(tw_listener *ls, rdma_cm_id *id, const void *pdata, size_t plen)
{
    tw_transport *t = ls->loop->t;
    std::string peer = peer_of(id);
    WireHello hello{};
    RejectReason reason{};
    std::string why = hello_from_wire(pdata, plen, &hello, &reason);
    if (!why.empty()) {
        logf(t, TW_LOG_INFO, "refused RDMA connection from %s: %s", peer.c_str(), why.c_str());
        reject(id, reason, "server: " + why);
        t->reaper.destroy(id);
        t->counters.handshakes_aborted += 1;
        return;
    }
    uint8_t version = negotiate(hello, kProtoMin, kProtoMax);
    if (version == 0) {
        std::string text = format("no common protocol version: client speaks %u..%u, server %u..%u", hello.proto_min,
                                  hello.proto_max, kProtoMin, kProtoMax);
        logf(t, TW_LOG_INFO, "refused RDMA connection from %s: %s", peer.c_str(), text.c_str());
        reject(id, RejectReason::Version, "server: " + text);
        t->reaper.destroy(id);
        t->counters.handshakes_aborted += 1;
        return;
    }
    if (ls->closed || static_cast<int>(ls->queue.size()) >= ls->backlog) {
        logf(t, TW_LOG_INFO, "refused RDMA connection from %s: %s", peer.c_str(),
             ls->closed ? "listener closing" : "accept backlog full");
        reject(id, ls->closed ? RejectReason::Shutdown : RejectReason::Backlog,
               ls->closed ? "server: listener closing" : format("server: accept backlog of %d full", ls->backlog));
        t->reaper.destroy(id);
        t->counters.handshakes_aborted += 1;
        return;
    }
    tw_conn *c = conn_new(ls->loop);
    c->state = ConnState::Queued;
    c->listener = ls;
    c->res.id = id;
    id->context = c;
    c->client_hello = hello;
    c->version = version;
    c->peer_text = peer;
    ls->queue.push_back(c);
}

} // namespace

namespace {

/// A listening id on `ls->addr`; 0 or -errno (the id is left unset).
int listen_on(tw_listener *ls)
{
    tw_transport_loop *l = ls->loop;
    rdma_cm_id *id = nullptr;
    if (rdma_create_id(l->cm, &id, ls, RDMA_PS_TCP) != 0) {
        int err = errno;
        logf(l->t, TW_LOG_ERROR, "%s", call_failed("rdma_create_id", err).c_str());
        return -err;
    }
    if (ls->addr.ss_family == AF_INET6) {
        int afonly = ls->v6only ? 1 : 0;
        rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &afonly, sizeof afonly);
    }
    int reuse = 1;
    rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &reuse, sizeof reuse);
    sockaddr_storage ss = ls->addr;
    if (rdma_bind_addr(id, reinterpret_cast<sockaddr *>(&ss)) != 0 || rdma_listen(id, ls->backlog) != 0) {
        int err = errno;
        rdma_destroy_id(id);
        return -err;
    }
    // Port 0 took a port: listening again takes the same one.
    const sockaddr *bound = rdma_get_local_addr(id);
    std::memcpy(&ls->addr, bound, bound->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    ls->id = id;
    return 0;
}

} // namespace

int listener_open(tw_transport_loop *l, const tw_listen_params *p, tw_listener **out)
{
    if (!p || p->size < TW_LISTEN_PARAMS_SIZE_V1 || !p->addr || !p->on_incoming) return -EINVAL;
    if (!(p->addr->sa_family == AF_INET && p->addrlen >= sizeof(sockaddr_in)) &&
        !(p->addr->sa_family == AF_INET6 && p->addrlen >= sizeof(sockaddr_in6)))
        return -EAFNOSUPPORT;
    auto ls = std::make_unique<tw_listener>();
    ls->loop = l;
    ls->on_incoming = p->on_incoming;
    ls->arg = p->arg;
    ls->backlog = p->backlog > 0 ? p->backlog : 1024;
    ls->v6only = (p->flags & TW_LISTEN_V6ONLY) != 0;
    std::memcpy(&ls->addr, p->addr, p->addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    int rc = listen_on(ls.get());
    if (rc) {
        logf(l->t, TW_LOG_INFO, "RDMA listen: %s", call_failed("rdma_bind_addr/rdma_listen", -rc).c_str());
        return rc == -ENODEV ? -EADDRNOTAVAIL : rc;
    }
    l->listeners.push_back(ls.get());
    *out = ls.release();
    return 0;
}

void listener_suspend(tw_listener *ls, const std::string &why)
{
    if (ls->suspended || ls->closed) return;
    while (!ls->queue.empty()) listener_drop_queued(ls, ls->queue.front(), "its device went");
    if (ls->id) ls->loop->t->reaper.destroy(ls->id);
    ls->id = nullptr;
    ls->suspended = true;
    logf(ls->loop->t, TW_LOG_WARN,
         "RDMA listener on %s: %s; it accepts nothing until an RDMA device holds the address again",
         sockaddr_text(reinterpret_cast<const sockaddr *>(&ls->addr)).c_str(), why.c_str());
}

void listener_relisten(tw_listener *ls)
{
    if (!ls->suspended || ls->closed) return;
    int rc = listen_on(ls);
    std::string where = sockaddr_text(reinterpret_cast<const sockaddr *>(&ls->addr));
    if (rc) {
        logf(ls->loop->t, TW_LOG_DEBUG, "RDMA listener on %s: not yet: %s", where.c_str(),
             call_failed("rdma_bind_addr/rdma_listen", -rc).c_str());
        return;
    }
    ls->suspended = false;
    logf(ls->loop->t, TW_LOG_INFO, "RDMA listener on %s listens again", where.c_str());
}

void listener_follow_address(tw_listener *ls, const char *event)
{
    if (ls->closed || ls->suspended) return;
    tw_transport *t = ls->loop->t;
    t->counters.addr_change_listeners += 1;
    // The reaper destroys the old id on its thread: until it has, the port
    // is still taken and listen_on fails; the device watch tries again.
    if (ls->id) t->reaper.destroy(ls->id);
    ls->id = nullptr;
    ls->suspended = true;
    logf(t, TW_LOG_WARN,
         "RDMA listener on %s: %s: its address moved to another hardware address (a bonding failover); it listens "
         "again on what holds the address now",
         sockaddr_text(reinterpret_cast<const sockaddr *>(&ls->addr)).c_str(), event);
    listener_relisten(ls);
}

void listener_on_cm_event(tw_listener *ls, const rdma_cm_event &ev, const void *pdata, size_t plen)
{
    if (ev.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
        on_request(ls, ev.id, pdata, plen);
        return;
    }
    if (ev.event == RDMA_CM_EVENT_ADDR_CHANGE) {
        listener_follow_address(ls, rdma_event_str(ev.event));
        return;
    }
    if (ev.event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
        // Bound to the device's address: the device is released (this
        // listener suspended with it).  A wildcard one listens again.
        Device *d = ls->id && ls->id->verbs ? ls->loop->t->devices.of(ls->id->verbs) : nullptr;
        if (d) device_lost(ls->loop, d, rdma_event_str(ev.event));
        listener_suspend(ls, rdma_event_str(ev.event));
    }
}

void listener_drop_queued(tw_listener *ls, tw_conn *c, const char *why)
{
    tw_transport *t = ls->loop->t;
    auto it = std::find(ls->queue.begin(), ls->queue.end(), c);
    if (it != ls->queue.end()) ls->queue.erase(it);
    logf(t, TW_LOG_DEBUG, "incoming connection from %s abandoned by the client before accept (%s)",
         c->peer_text.c_str(), why);
    t->counters.handshakes_aborted += 1;
    c->listener = nullptr;
    conn_teardown(c);
    mark_reached(c, kHostClosed); // never seen by the host
    mark_reached(c, kReaped);
    ls->loop->reap.push_back(c);
}

int listener_accept(tw_listener *ls, tw_transport_loop *target, tw_conn **out)
{
    tw_transport *t = ls->loop->t;
    while (!ls->queue.empty()) {
        tw_conn *c = ls->queue.front();
        ls->queue.pop_front();
        c->listener = nullptr;
        // Ownership moves to `target` now: its thread reads the id's events
        // from here on, and only it touches the connection.
        ls->loop->conns.erase(c);
        if (target != ls->loop && rdma_migrate_id(c->res.id, target->cm) != 0) {
            logf(t, TW_LOG_WARN, "accept from %s: %s", c->peer_text.c_str(),
                 call_failed("rdma_migrate_id", errno).c_str());
            reject(c->res.id, RejectReason::Resources, "server: cannot hand the connection to a loop");
            ls->loop->conns.insert(c);
            t->counters.handshakes_aborted += 1;
            conn_teardown(c);
            mark_reached(c, kHostClosed);
            mark_reached(c, kReaped);
            ls->loop->reap.push_back(c);
            continue;
        }
        c->loop = target;
        c->state = ConnState::Accepting;
        int rc = t->host->run_in_loop(target->loop, conn_accept_on_target, c);
        if (rc) {
            // The target loop is stopping: give up on this one.
            reject(c->res.id, RejectReason::Shutdown, "server: shutting down");
            t->reaper.destroy(c->res.id);
            c->res.id = nullptr;
            t->counters.connections_open -= 1;
            t->counters.handshakes_aborted += 1;
            delete c;
            return rc;
        }
        *out = c;
        return 0;
    }
    return -EAGAIN;
}

void listener_close(tw_listener *ls)
{
    tw_transport_loop *l = ls->loop;
    ls->closed = true;
    while (!ls->queue.empty()) {
        tw_conn *c = ls->queue.front();
        ls->queue.pop_front();
        reject(c->res.id, RejectReason::Shutdown, "server: listener closed");
        l->t->counters.handshakes_aborted += 1;
        c->listener = nullptr;
        conn_teardown(c);
        mark_reached(c, kHostClosed);
        mark_reached(c, kReaped);
        l->reap.push_back(c);
    }
    if (ls->id) l->t->reaper.destroy(ls->id);
    ls->id = nullptr;
    l->listeners.erase(std::remove(l->listeners.begin(), l->listeners.end(), ls), l->listeners.end());
    l->dead_listeners.push_back(ls);
}

} // namespace twrdma
