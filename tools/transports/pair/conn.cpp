// SPDX-License-Identifier: MIT
// Connections: connect, the ends' life and state, errors, addresses,
// counters.  The byte stream itself is in stream.cpp.
#include "pair.hpp"

#include <cerrno>
#include <cstring>
#include <new>

namespace twpair {
namespace {

const char *errno_name(int err)
{
    switch (-err) {
    case ECONNREFUSED:
        return "ECONNREFUSED";
    case ECONNRESET:
        return "ECONNRESET";
    case EPIPE:
        return "EPIPE";
    case ENOMEM:
        return "ENOMEM";
    default:
        return "";
    }
}

/// Connecting to a wildcard reaches this host, as with sockets.
sockaddr_storage destination(const sockaddr *addr)
{
    sockaddr_storage to = copy_address(addr);
    if (!is_wildcard(to)) return to;
    if (to.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6 &>(to).sin6_addr = in6addr_loopback;
    else reinterpret_cast<sockaddr_in &>(to).sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return to;
}

/// The client's own name: the source it asked for, else the address it
/// connects to, with a port of the namespace when none was given.
sockaddr_storage client_address(const tw_connect_params *p, const sockaddr_storage &to)
{
    sockaddr_storage local = to;
    if (p->source && check_address(p->source, p->sourcelen) == 0 && p->source->sa_family == to.ss_family)
        local = copy_address(p->source);
    if (port_of(local) == 0 || !p->source) set_port(local, registry_client_port());
    return local;
}

/// Make the link between a new client end and an end for the listener's
/// backlog.  Registry mutex held.
void join(tw_conn *client, tw_listener *l)
{
    tw_transport *server_transport = l->tloop->transport;
    tw_conn *server = conn_new(server_transport, nullptr);
    auto *link = new (std::nothrow) Link;
    if (!server || !link) {
        delete server;
        delete link;
        conn_fail(client, -ENOMEM, "connect", "out of memory for the connection's state");
        return;
    }
    // ring[i] is what end i receives: sized by end i's own transport.
    link->ring[0].cap = client->transport->settings.buffer_size;
    link->ring[1].cap = server_transport->settings.buffer_size;
    link->end[0] = client;
    link->end[1] = server;
    client->link = link;
    client->side = 0;
    server->link = link;
    server->side = 1;
    server->local = client->peer;
    server->peer = client->local;
    l->backlog.push_back(server);
    server_transport->open++;
    // Decided at once, reported from the loop (rule 2).
    client->pending |= TW_EV_CONNECTED;
    client->transport->connected++;
    wake(l, l->tloop, client->tloop);
}

} // namespace

tw_conn *conn_new(tw_transport *t, tw_transport_loop *tl)
{
    auto *c = new (std::nothrow) tw_conn;
    if (!c) return nullptr;
    c->transport = t;
    c->tloop = tl;
    return c;
}

int conn_fail(tw_conn *c, int err, const char *call, const std::string &hint)
{
    if (c->error) return c->error;
    c->error = err;
    c->last_error = std::string(call) + ": " + strerror(-err);
    if (*errno_name(err)) c->last_error += std::string(" (") + errno_name(err) + ")";
    c->last_error += "; hint: " + hint;
    c->pending |= TW_EV_ERROR;
    conn_self_wake(c);
    return err;
}

void conn_sync(tw_conn *c)
{
    if (c->link && c->link->reset[c->side] && !c->error)
        conn_fail(c, -ECONNRESET, "read", "the peer closed with bytes it had not read (a reset, as TCP sends)");
}

uint32_t conn_readiness(tw_conn *c)
{
    conn_sync(c);
    const Ring &in = c->in();
    uint32_t ready = 0;
    if (in.used() > 0 || in.eof || c->rd_shut || c->error) ready |= TW_EV_READ;
    // Writable: a write would not return -EAGAIN (it takes bytes, or it
    // fails at once because the peer has gone).
    if (!c->error && !c->wr_shut && !c->send_lent) {
        const Ring &out = c->out();
        if (!c->link->end[c->peer_side()] || out.discard || out.free_space() > 0) ready |= TW_EV_WRITE;
    }
    return ready;
}

void conn_self_wake(tw_conn *c)
{
    if (c->tloop) mark_active(c->tloop, c);
}

void conn_wake_peer(tw_conn *c)
{
    tw_conn *peer = c->link->end[c->peer_side()];
    if (peer) wake(peer, peer->tloop, c->tloop);
}

/// Detach this end from its link; the other end gets end-of-stream, or a
/// reset when `abort`.  Frees the link with its last end.
static void leave_link(tw_conn *c, bool abort)
{
    Link *link = c->link;
    if (!link) return;
    bool last;
    {
        std::lock_guard<std::mutex> lock(link->mutex);
        link->end[c->side] = nullptr;
        Ring &in = c->in();
        in.discard = true; // nothing more is read on this side
        c->out().eof = true;
        if (link->end[c->peer_side()]) {
            if (abort || in.used() > 0) link->reset[c->peer_side()] = true;
            conn_wake_peer(c);
        }
        last = --link->ends_open == 0;
    }
    if (last) delete link;
    c->link = nullptr;
}

void conn_abort_unaccepted(tw_conn *c)
{
    c->transport->aborted++;
    c->transport->open--;
    leave_link(c, true);
    delete c;
}

} // namespace twpair

using namespace twpair;

int pair_connect(tw_transport_loop *tl, const tw_connect_params *p, tw_conn **out)
{
    *out = nullptr;
    if (!p || p->size < TW_CONNECT_PARAMS_SIZE_V1) return -EINVAL;
    if (int rc = check_address(p->addr, p->addrlen); rc < 0) return rc;
    tw_conn *c = conn_new(tl->transport, tl);
    if (!c) return -ENOMEM;
    c->peer = destination(p->addr);
    c->local = client_address(p, c->peer);
    tl->transport->open++;
    {
        std::lock_guard<std::mutex> lock(registry_mutex());
        tw_listener *l = registry_find_listener(c->peer);
        if (!l)
            conn_fail(c, -ECONNREFUSED, "connect",
                      "nothing listens on " + address_text(c->peer) +
                          " in this process (pair connects only within one process)");
        else if (l->backlog.size() >= l->backlog_max)
            conn_fail(c, -ECONNREFUSED, "connect",
                      "the listener on " + address_text(c->peer) + " has " + std::to_string(l->backlog.size()) +
                          " connections waiting to be accepted, its backlog");
        else join(c, l);
    }
    *out = c;
    return 0;
}

int pair_set_callback(tw_conn *c, tw_conn_cb cb, void *arg)
{
    c->cb = cb;
    c->arg = arg;
    conn_self_wake(c); // what happened before, now (rule 1)
    return 0;
}

int pair_set_events(tw_conn *c, uint32_t events)
{
    c->interest = events & (TW_EV_READ | TW_EV_WRITE);
    conn_self_wake(c);
    return 0;
}

int pair_shutdown(tw_conn *c, int how)
{
    if (how != SHUT_WR && how != SHUT_RD && how != SHUT_RDWR) return -EINVAL;
    if (!c->up) return c->error ? c->error : -ENOTCONN;
    std::lock_guard<std::mutex> lock(c->link->mutex);
    if (how != SHUT_RD && !c->wr_shut) {
        c->wr_shut = true;
        c->out().eof = true;
        conn_wake_peer(c);
    }
    if (how != SHUT_WR && !c->rd_shut) {
        c->rd_shut = true;
        Ring &in = c->in();
        in.discard = true;
        if (!in.recv_lent) in.head = in.tail;
        in.rewind_if_idle();
        conn_wake_peer(c); // its writes are taken (and dropped) from now on
    }
    conn_self_wake(c);
    return 0;
}

void pair_close(tw_conn *c)
{
    forget(c->tloop, c);
    c->transport->open--;
    leave_link(c, false);
    // Wake-ups from the other end stop with leave_link; one already in the
    // inbox goes now.
    forget(c->tloop, c);
    delete c;
}

int pair_get_error(tw_conn *c) { return c->error; }

const char *pair_last_error(tw_conn *c) { return c->last_error.c_str(); }

int pair_local_addr(tw_conn *c, sockaddr *addr, uint32_t *addrlen) { return copy_out_address(c->local, addr, addrlen); }

int pair_peer_addr(tw_conn *c, sockaddr *addr, uint32_t *addrlen) { return copy_out_address(c->peer, addr, addrlen); }

int pair_get_stats(tw_conn *c, tw_conn_stats *out)
{
    if (!out || out->size < 8) return -EINVAL;
    tw_conn_stats s = c->stats;
    s.size = out->size;
    s.version = TW_CONN_STATS_VERSION;
    memcpy(out, &s, out->size < sizeof s ? out->size : sizeof s);
    return 0;
}
