// SPDX-License-Identifier: MIT
// Listeners: the inner transport's, with accepted connections wrapped.
#include "fault.hpp"

#include <stacked_loop.hpp>

#include <cerrno>
#include <netinet/in.h>
#include <new>

namespace {

void on_inner_incoming(tw_listener *, void *arg)
{
    tw_listener *l = static_cast<tw_listener *>(arg);
    l->on_incoming(l, l->arg);
}

} // namespace

namespace fault {

uint32_t port_of(const struct sockaddr *addr)
{
    if (!addr) return 0;
    if (addr->sa_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in *>(addr)->sin_port);
    if (addr->sa_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6 *>(addr)->sin6_port);
    return 0;
}

} // namespace fault

extern "C" int fault_listen(tw_transport_loop *fl, const struct tw_listen_params *params, tw_listener **out)
{
    if (!params || params->size < TW_LISTEN_PARAMS_SIZE_V1 || !params->on_incoming) return -EINVAL;
    tw_listener *l = new (std::nothrow) tw_listener{};
    if (!l) return -ENOMEM;
    l->fl = fl;
    l->on_incoming = params->on_incoming;
    l->arg = params->arg;
    tw_listen_params p = twinwire::stacking::inner_listen_params(*params, on_inner_incoming, l);
    int rc = fl->t->inner->listen(fl->inner, &p, &l->inner);
    if (rc < 0) {
        delete l;
        return rc;
    }
    sockaddr_storage bound{};
    uint32_t len = sizeof bound;
    if (fl->t->inner->listener_addr(l->inner, reinterpret_cast<sockaddr *>(&bound), &len) == 0)
        l->port = fault::port_of(reinterpret_cast<sockaddr *>(&bound));
    else l->port = fault::port_of(params->addr);
    *out = l;
    return 0;
}

extern "C" int fault_accept(tw_listener *l, tw_transport_loop *target, tw_conn **out)
{
    tw_conn *inner = nullptr;
    int rc = l->fl->t->inner->accept(l->inner, target->inner, &inner);
    if (rc < 0) return rc;
    tw_conn *c = fault::new_conn(l->fl->t, target, inner, l->port);
    if (!c) {
        l->fl->t->inner->close(inner);
        return -ENOMEM;
    }
    c->up = false; // the inner transport reports TW_EV_CONNECTED
    *out = c;
    return 0;
}

extern "C" int fault_listener_addr(tw_listener *l, struct sockaddr *addr, uint32_t *addrlen)
{
    return l->fl->t->inner->listener_addr(l->inner, addr, addrlen);
}

extern "C" void fault_listener_close(tw_listener *l)
{
    l->fl->t->inner->listener_close(l->inner);
    delete l;
}
