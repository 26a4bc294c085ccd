// SPDX-License-Identifier: MIT
// What every plugin stacked over an inner transport (tls, fault) does the
// same way: a loop that wraps the inner transport's loop, connections still
// lingering when it goes, listen parameters passed on with our own
// callback, and the settings loader's errors turned into a reason.
// Header-only templates over each plugin's own types: each is built on
// plugin_api alone.
#pragma once

#include <twinwire/errors.h>
#include <twinwire/transport.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <new>
#include <vector>

namespace twinwire::stacking {

/// loop_attach: a new Loop (members t, loop, inner) over the inner
/// transport's loop on `loop`.
template <class Loop, class Transport> int attach_loop(Transport *t, tw_loop *loop, Loop **out)
{
    Loop *l = new (std::nothrow) Loop{};
    if (!l) return -ENOMEM;
    l->t = t;
    l->loop = loop;
    int rc = t->inner->loop_attach(t->inner_t, loop, &l->inner);
    if (rc < 0) {
        delete l;
        return rc;
    }
    *out = l;
    return 0;
}

/// loop_detach: connections still lingering (l->lingering) get no more
/// time, as the loop is going: their inner connections close and
/// `free_conn` frees each; then the inner loop goes.
template <class Loop, class FreeConn> void detach_loop(Loop *l, FreeConn free_conn)
{
    auto left = std::move(l->lingering);
    l->lingering.clear();
    for (auto *c : left) {
        if (c->inner) c->t->inner->close(c->inner);
        c->inner = nullptr;
        free_conn(c);
    }
    l->t->inner->loop_detach(l->inner);
    delete l;
}

/// The caller's listen parameters for the inner transport, with our
/// callback and argument in place of the caller's.
inline tw_listen_params inner_listen_params(const tw_listen_params &params, tw_incoming_cb on_incoming, void *arg)
{
    tw_listen_params p{};
    p.size = sizeof p;
    p.backlog = params.backlog;
    p.addr = params.addr;
    p.addrlen = params.addrlen;
    p.flags = params.flags;
    p.on_incoming = on_incoming;
    p.arg = arg;
    return p;
}

/// Run `load` (which throws Bad with the whole reason for a wrong value):
/// 0, -TW_ECONFIG with Bad's words, or -ENOMEM naming the `prefix` keys.
template <class Bad, class Load> int load_guarded(const char *prefix, Load load, char *why, size_t why_len)
{
    try {
        load();
        return 0;
    } catch (const Bad &e) {
        snprintf(why, why_len, "%s", e.what());
        return -TW_ECONFIG;
    } catch (const std::exception &e) {
        snprintf(why, why_len, "reading the %s.* keys: %s", prefix, e.what());
        return -ENOMEM;
    }
}

} // namespace twinwire::stacking
