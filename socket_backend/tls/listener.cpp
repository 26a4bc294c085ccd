// SPDX-License-Identifier: MIT
// Listeners: the inner transport's, each accepted connection wrapped in a
// server-side TLS session.  Handshakes in flight are counted over every
// loop; past tls.max_handshakes a new one is refused at once.
#include "tls.hpp"

#include <stacked_loop.hpp>

#include <cerrno>
#include <new>

namespace {

void on_inner_incoming(tw_listener *, void *arg)
{
    tw_listener *l = static_cast<tw_listener *>(arg);
    l->on_incoming(l, l->arg);
}

} // namespace

extern "C" int tls_listen(tw_transport_loop *tl, const struct tw_listen_params *params, tw_listener **out)
{
    if (!params || params->size < TW_LISTEN_PARAMS_SIZE_V1 || !params->on_incoming) return -EINVAL;
    tw_transport *t = tl->t;
    if (!t->credentials.can_serve()) {
        t->host->log(t->host, TW_LOG_ERROR,
                     "TLS cannot listen: this end has no certificate (set tls.cert_file and tls.key_file)");
        return -EINVAL;
    }
    tw_listener *l = new (std::nothrow) tw_listener{};
    if (!l) return -ENOMEM;
    l->tl = tl;
    l->on_incoming = params->on_incoming;
    l->arg = params->arg;
    tw_listen_params p = twinwire::stacking::inner_listen_params(*params, on_inner_incoming, l);
    int rc = t->inner->listen(tl->inner, &p, &l->inner);
    if (rc < 0) {
        delete l;
        return rc;
    }
    *out = l;
    return 0;
}

extern "C" int tls_accept(tw_listener *l, tw_transport_loop *target, tw_conn **out)
{
    tw_transport *t = l->tl->t;
    tw_conn *inner = nullptr;
    int rc = t->inner->accept(l->inner, target->inner, &inner);
    if (rc < 0) return rc;
    tw_conn *c = tls::new_conn(t, target, true);
    if (!c) {
        t->inner->close(inner);
        return -ENOMEM;
    }
    c->inner = inner;
    SSL_set_accept_state(c->ssl);
    // Over the bound, the connection is refused on its own loop (set_callback),
    // where it can say so and close: a flood costs an accept and a close each.
    if (t->handshakes_in_flight.fetch_add(1) >= t->settings.max_handshakes) {
        t->handshakes_in_flight--;
        c->flags |= tls::kTooBusy;
    } else {
        c->flags |= tls::kInFlight;
    }
    // Tasks posted to a loop run in order: the inner transport's accept
    // tasks, this one, then the host's set_callback.  So the handshake
    // starts without waiting for the host, as a TCP connection would.  The
    // flag is set first: on another loop's thread the task may run (and
    // clear it) before run_in_loop returns, and c is not touched after.
    c->flags |= tls::kStartPending;
    if (t->host->run_in_loop(target->loop, tls::start_accepted, c) != 0) c->flags &= ~tls::kStartPending;
    *out = c;
    return 0;
}

extern "C" int tls_listener_addr(tw_listener *l, struct sockaddr *addr, uint32_t *addrlen)
{
    return l->tl->t->inner->listener_addr(l->inner, addr, addrlen);
}

extern "C" void tls_listener_close(tw_listener *l)
{
    l->tl->t->inner->listener_close(l->inner);
    delete l;
}
