// SPDX-License-Identifier: MIT
// Connection lifecycle: connect and accept handshakes over rdma_cm, failure,
// lingering close and teardown (the peer's rkey withdrawn before the memory
// is reused).
#include "core.hpp"

#include "report.hpp"
#include "rma.hpp"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

namespace twrdma {

static void start_resolve(tw_conn *c);

namespace {

/// Address and route resolution plus three CM messages: more than a TCP
/// handshake needs, so a roomier default when the host gives none.
constexpr uint32_t kDefaultConnectTimeoutMs = 10000;

bool addr_ok(const sockaddr *sa, uint32_t len)
{
    if (!sa) return false;
    if (sa->sa_family == AF_INET) return len >= sizeof(sockaddr_in);
    if (sa->sa_family == AF_INET6) return len >= sizeof(sockaddr_in6);
    return false;
}

int remaining_ms(tw_conn *c)
{
    uint64_t now = now_ns(c->loop->t);
    if (now >= c->deadline_ns) return 1;
    uint64_t ms = (c->deadline_ns - now) / 1000000ull;
    return ms < 1 ? 1 : ms > 60000 ? 60000 : static_cast<int>(ms);
}

WireHello own_hello(tw_conn *c)
{
    const Settings &s = c->loop->t->cfg;
    WireHello h{};
    h.magic = kHelloMagic;
    h.proto_min = kProtoMin;
    h.proto_max = kProtoMax;
    h.proto_chosen = c->version;
    h.features = 0;
    h.ring_size = static_cast<uint32_t>(c->rx.size);
    h.recv_depth = static_cast<uint16_t>(s.recv_depth);
    h.credit_reserve = static_cast<uint16_t>(s.control_credits);
    return h;
}

void apply_peer(tw_conn *c, const WireHello &peer)
{
    c->peer = peer;
    c->credits.send = peer.recv_depth;
}

rdma_conn_param conn_param(tw_conn *c, const void *pdata, uint8_t plen)
{
    const Settings &s = c->loop->t->cfg;
    rdma_conn_param p{};
    p.private_data = pdata;
    p.private_data_len = plen;
    // RDMA READ (rma_post) both ways: the client asks for what its device
    // allows, the server takes what rdma_cm negotiated from that request.
    Device *dev = c->res.ldev ? c->res.ldev->dev : nullptr;
    p.responder_resources = !c->is_client ? RDMA_MAX_RESP_RES : dev ? rma_responder_resources(dev) : 0;
    p.initiator_depth = !c->is_client ? RDMA_MAX_INIT_DEPTH : dev ? rma_initiator_depth(dev) : 0;
    p.retry_count = static_cast<uint8_t>(s.retry_count);
    p.rnr_retry_count = static_cast<uint8_t>(s.rnr_retry);
    return p;
}

/// The device rdma_cm chose for the id, if the transport may use it;
/// nullptr with *rc and *why if not.
Device *chosen_device(tw_conn *c, int *rc, std::string *why)
{
    tw_transport *t = c->loop->t;
    const Settings &s = t->cfg;
    Device *dev = t->devices.find(c->res.id->verbs);
    if (!dev) {
        *why = "rdma_cm chose a device the transport did not open";
        *rc = -ENODEV;
        return nullptr;
    }
    if (!dev->usable) {
        *why = format("the address resolves to RDMA device %s, which is not usable: %s", dev->name.c_str(),
                      dev->why_unusable.c_str());
        *rc = -ENETUNREACH;
        return nullptr;
    }
    if (s.port && c->res.id->port_num != s.port) {
        *why = format("the address resolves to %s port %u, not rdma.port = %u", dev->name.c_str(), c->res.id->port_num,
                      s.port);
        *rc = -ENETUNREACH;
        return nullptr;
    }
    return dev;
}

/// Create the RC QP on `cq`, receiving from `srq` (inline data if the device allows it) and set
/// its ACK timeout.  Returns 0 or a negative code with *why.
int create_qp(tw_conn *c, Device *dev, ibv_cq *cq, ibv_srq *srq, std::string *why)
{
    tw_transport_loop *l = c->loop;
    const Settings &s = l->t->cfg;
    ibv_qp_init_attr attr{};
    attr.send_cq = cq;
    attr.recv_cq = cq;
    attr.srq = srq;
    attr.qp_type = IBV_QPT_RC;
    attr.sq_sig_all = 0;
    attr.cap.max_send_wr = s.sq_depth;
    attr.cap.max_send_sge = 2;
    attr.cap.max_inline_data = 64;
    if (rdma_create_qp(c->res.id, dev->pd, &attr) != 0) {
        // Some devices cannot inline; retry without.
        attr.cap.max_inline_data = 0;
        if (rdma_create_qp(c->res.id, dev->pd, &attr) != 0) {
            int err = errno;
            *why = call_failed("rdma_create_qp", err, "device QP limits; lower rdma.sq_depth");
            return -err;
        }
    }
    c->res.qp = c->res.id->qp;
    c->res.ldev->max_inline = attr.cap.max_inline_data;
    uint8_t timeout = static_cast<uint8_t>(s.qp_timeout);
    if (rdma_set_option(c->res.id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout) != 0)
        logf(l->t, TW_LOG_DEBUG, "%s",
             call_failed("rdma_set_option(ACK_TIMEOUT)", errno, "the kernel default applies").c_str());
    return 0;
}

/// Lay the streams over the block: the receive ring (the grant's memory),
/// the TX staging ring, then the control message buffers.
void attach_block(tw_conn *c, const Settings &s)
{
    c->rx.mem = c->res.block->ring;
    c->rx.size = s.ring_size;
    c->grant.mem = c->rx.mem;
    c->grant.size = c->rx.size;
    c->grant.mr = c->res.block->ring_mr;
    c->tx.mem = c->res.block->local;
    c->tx.size = s.send_buffer_size;
    c->tx.ring = TxRing{c->tx.mem, c->tx.size, c->res.block->lkey, nullptr, 0};
    c->sq.ctrl_bufs = c->tx.mem + s.send_buffer_size;
}

/// Create the QP on the loop's CQ and shared receive queue for the id's
/// device, take a block.  Returns 0 or a negative code with *why.
int setup_qp(tw_conn *c, std::string *why)
{
    tw_transport_loop *l = c->loop;
    const Settings &s = l->t->cfg;
    int rc = 0;
    Device *dev = chosen_device(c, &rc, why);
    if (!dev) return rc;
    c->res.ldev = loop_device(l, dev, why);
    if (!c->res.ldev) return -ENOMEM;
    c->res.block = c->res.ldev->pool->take(why);
    if (!c->res.block) {
        c->stats.pool_exhausted += 1;
        return -ENOBUFS;
    }
    int entries = static_cast<int>(s.sq_depth + s.recv_depth);
    c->res.cq_slot = cq_reserve(c->res.ldev, entries, why);
    if (c->res.cq_slot < 0) return -ENOMEM;
    ibv_srq *srq = c->res.ldev->receives->reserve(s.recv_depth, &c->res.srq_slot, why);
    if (!srq) return -ENOBUFS;
    rc = create_qp(c, dev, c->res.ldev->cqs[static_cast<size_t>(c->res.cq_slot)].cq, srq, why);
    if (rc) return rc;
    c->res.ldev->qps[c->res.qp->qp_num] = c;

    c->serial = l->next_serial++;
    if (l->next_serial == 0) l->next_serial = 1;
    l->serials[c->serial] = c;

    attach_block(c, s);
    // The windows after the QP, never before: a process that dies with its
    // windows bound has its verbs objects destroyed newest first, and on rxe
    // a QP destroyed while a bound window still references it waits 50 s
    // for that reference (the killed-peer cases spent their time there).
    // Its receives are in the shared queue already (reserved above).
    return grant_prepare(c, c->grant, why);
}

void established(tw_conn *c)
{
    c->state = ConnState::Established;
    mark_reached(c, kWasEstablished);
    c->host.connected_pending = true;
    c->live.last_rx_ns = now_ns(c->loop->t);
    c->resize.last_data_ns = c->live.last_rx_ns;
    c->deadline_ns = 0;
    if (c->is_client) c->loop->t->counters.connections_connected += 1;
    else c->loop->t->counters.connections_accepted += 1;
    mark_ready(c);
    // The QP is in RTS now: bind our ring's window; RING names it to the
    // peer once the bind completed, and only then can the peer write.
    conn_bind_ring(c);
    conn_pump(c);
}

int map_cm_failure(const rdma_cm_event &ev)
{
    switch (ev.event) {
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
        return ev.status == -ENETUNREACH ? -ENETUNREACH : ev.status == -ETIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH;
    case RDMA_CM_EVENT_UNREACHABLE:
        return ev.status == -ETIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH;
    case RDMA_CM_EVENT_CONNECT_ERROR:
        return -ECONNREFUSED;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        return -ENODEV;
    default:
        return -ECONNRESET;
    }
}

void client_event(tw_conn *c, const rdma_cm_event &ev, const void *pdata, size_t plen)
{
    tw_transport *t = c->loop->t;
    switch (ev.event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (c->state != ConnState::ResolvingAddr) return;
        c->state = ConnState::ResolvingRoute;
        c->client.addr_resolved_ns = now_ns(t);
        if (rdma_resolve_route(c->res.id, remaining_ms(c)) != 0)
            conn_fail(c, -EHOSTUNREACH, call_failed("rdma_resolve_route", errno));
        return;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
        if (c->state != ConnState::ResolvingRoute) return;
        std::string why;
        int rc = setup_qp(c, &why);
        if (rc) {
            conn_fail(c, rc, "connect to " + c->peer_text + ": " + why);
            return;
        }
        WireHello wire = hello_to_wire(own_hello(c));
        rdma_conn_param p = conn_param(c, &wire, sizeof wire);
        c->state = ConnState::Connecting;
        if (rdma_connect(c->res.id, &p) != 0) conn_fail(c, -errno, call_failed("rdma_connect", errno));
        return;
    }
    case RDMA_CM_EVENT_ESTABLISHED: {
        if (c->state != ConnState::Connecting) return;
        WireHello peer{};
        std::string why = hello_from_wire(pdata, plen, &peer);
        if (why.empty()) {
            c->version = peer.proto_chosen;
            if (c->version < kProtoMin || c->version > kProtoMax)
                why = format("server chose protocol version %u, this side speaks %u..%u", c->version, kProtoMin,
                             kProtoMax);
        }
        if (!why.empty()) {
            conn_fail(c, -TW_EPEERPROTO,
                      c->peer_text + " accepted the RDMA connection but is not a twinwire peer: " + why);
            return;
        }
        apply_peer(c, peer);
        established(c);
        return;
    }
    case RDMA_CM_EVENT_REJECTED: {
        RejectReason reason{};
        std::string text;
        if (reject_from_wire(pdata, plen, &reason, &text)) {
            bool proto =
                reason == RejectReason::BadHello || reason == RejectReason::Version || reason == RejectReason::Features;
            conn_fail(c, proto ? -TW_EPEERPROTO : -ECONNREFUSED,
                      c->peer_text + " refused the RDMA connection: " + text);
        } else {
            conn_fail(c, -ECONNREFUSED,
                      format("%s rejected the RDMA connection (CM reject status %d): no twinwire RDMA listener there",
                             c->peer_text.c_str(), ev.status));
        }
        return;
    }
    default:
        break;
    }
    (void)t;
}

/// ADDR_ERROR, ROUTE_ERROR, UNREACHABLE or CONNECT_ERROR: the handshake failed.
void on_handshake_error(tw_conn *c, const rdma_cm_event &ev)
{
    tw_transport *t = c->loop->t;
    if (c->state == ConnState::Accepting) {
        logf(t, TW_LOG_DEBUG, "incoming connection from %s abandoned by the client: %s", c->peer_text.c_str(),
             rdma_event_str(ev.event));
        t->counters.handshakes_aborted += 1;
    }
    conn_fail(c, map_cm_failure(ev),
              format("%s %s: %s (status %d)", c->is_client ? "connect to" : "accept from", c->peer_text.c_str(),
                     rdma_event_str(ev.event), ev.status));
}

/// DISCONNECTED or TIMEWAIT_EXIT: during the handshake a failure; once
/// established the end of the peer (clean after its SHUTDOWN, a reset if not).
void on_disconnect_event(tw_conn *c, const rdma_cm_event &ev)
{
    tw_transport *t = c->loop->t;
    if (ev.event == RDMA_CM_EVENT_TIMEWAIT_EXIT && c->state == ConnState::Established) return;
    if (c->state != ConnState::Established) {
        if (!c->is_client) {
            logf(t, TW_LOG_DEBUG, "incoming connection from %s abandoned by the client (%s)", c->peer_text.c_str(),
                 rdma_event_str(ev.event));
            t->counters.handshakes_aborted += 1;
        }
        conn_fail(c, -ECONNABORTED, c->peer_text + ": disconnected during the handshake");
        return;
    }
    mark_reached(c, kDisconnected);
    if (reached(c, kHostClosed)) {
        conn_check_linger(c);
        return;
    }
    if (c->rx.peer_eof) {
        // The peer ended cleanly (SHUTDOWN, then disconnect): reads give
        // end-of-stream, writes fail like on a closed socket.
        c->tx.write_error = -EPIPE;
        c->last_error = "write: broken pipe: " + c->peer_text +
                        " closed the connection (SHUTDOWN, then disconnect); nothing more can be sent";
        mark_ready(c);
    } else {
        conn_fail(c, -ECONNRESET,
                  "connection reset: " + c->peer_text +
                      " disconnected without SHUTDOWN (peer process killed or closed abruptly)");
    }
}

} // namespace

tw_conn *conn_new(tw_transport_loop *l)
{
    auto *c = new tw_conn();
    c->loop = l;
    c->stats.version = TW_CONN_STATS_VERSION;
    l->t->counters.connections_open += 1;
    l->conns.insert(c);
    ensure_tick(l);
    return c;
}

void conn_delete(tw_conn *c)
{
    tw_transport_loop *l = c->loop;
    if (c->state != ConnState::Finished) conn_teardown(c);
    rma_release(c);
    l->conns.erase(c);
    l->t->counters.connections_open -= 1;
    delete c;
}

/// Resolve the address in steps of at most a second: the kernel retries a
/// pending neighbour lookup only when the step times out, so one long step
/// would hold a connect for its whole timeout when ARP is slow to answer.
static void start_resolve(tw_conn *c)
{
    tw_transport_loop *l = c->loop;
    if (c->res.id) {
        l->t->reaper.destroy(c->res.id);
        c->res.id = nullptr;
    }
    if (rdma_create_id(l->cm, &c->res.id, c, RDMA_PS_TCP) != 0) {
        int err = errno;
        c->res.id = nullptr;
        conn_fail(c, -err, call_failed("rdma_create_id", err));
        return;
    }
    c->state = ConnState::ResolvingAddr;
    c->client.resolve_steps += 1;
    bool bind = c->client.src.ss_family != 0;
    int step = remaining_ms(c) < 1000 ? remaining_ms(c) : 1000;
    if (rdma_resolve_addr(c->res.id, bind ? reinterpret_cast<sockaddr *>(&c->client.src) : nullptr,
                          reinterpret_cast<sockaddr *>(&c->client.dst), step) != 0) {
        int err = errno;
        int code = err == ENODEV || err == EADDRNOTAVAIL || err == ENETUNREACH ? -ENETUNREACH : -EHOSTUNREACH;
        conn_fail(c, code,
                  "connect to " + c->peer_text + ": " +
                      call_failed("rdma_resolve_addr", err,
                                  bind ? "is the source address on an RDMA-capable interface?"
                                       : "no RDMA device reaches this address"));
    }
}

int conn_connect(tw_transport_loop *l, const tw_connect_params *p, tw_conn **out)
{
    if (!p || p->size < TW_CONNECT_PARAMS_SIZE_V1 || !addr_ok(p->addr, p->addrlen)) return -EINVAL;
    if (p->source && !addr_ok(p->source, p->sourcelen)) return -EINVAL;
    if (p->source && p->source->sa_family != p->addr->sa_family) return -EAFNOSUPPORT;
    tw_conn *c = conn_new(l);
    c->is_client = true;
    c->peer_text = sockaddr_text(p->addr);
    c->client.timeout_ms = p->timeout_ms ? p->timeout_ms : kDefaultConnectTimeoutMs;
    c->client.started_ns = now_ns(l->t);
    c->deadline_ns = c->client.started_ns + c->client.timeout_ms * 1000000ull;
    *out = c;
    std::memcpy(&c->client.dst, p->addr, p->addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    if (p->source) {
        std::memcpy(&c->client.src, p->source,
                    p->source->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    } else if (l->t->cfg.gid_index >= 0) {
        // rdma_cm picks the GID from the source address: rdma.gid_index is
        // applied by binding the address that GID entry carries.
        std::string why;
        if (!l->t->devices.gid_source(l->t->cfg, p->addr->sa_family, &c->client.src, &why)) {
            c->client.src.ss_family = 0;
            logf(l->t, TW_LOG_DEBUG, "connect to %s: rdma.gid_index not applied: %s", c->peer_text.c_str(),
                 why.c_str());
        }
    }
    start_resolve(c);
    return 0;
}

void conn_on_cm_event(tw_conn *c, const rdma_cm_event &ev, const void *pdata, size_t plen)
{
    tw_transport *t = c->loop->t;
    if (c->state == ConnState::Queued) {
        // The client gave up (or went away) before accept(): drop it quietly.
        if (c->listener) listener_drop_queued(c->listener, c, rdma_event_str(ev.event));
        return;
    }
    if (c->state == ConnState::Finished) return;
    if (ev.event == RDMA_CM_EVENT_ADDR_ERROR && c->is_client && ev.status == -ETIMEDOUT &&
        now_ns(t) + 1000000ull < c->deadline_ns) {
        start_resolve(c); // another step (see start_resolve)
        return;
    }
    switch (ev.event) {
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_CONNECT_ERROR:
        on_handshake_error(c, ev);
        return;
    case RDMA_CM_EVENT_REJECTED:
        if (c->is_client) break;
        logf(t, TW_LOG_DEBUG, "incoming connection from %s abandoned by the client (REJECTED)", c->peer_text.c_str());
        t->counters.handshakes_aborted += 1;
        conn_fail(c, -ECONNABORTED,
                  "accept from " + c->peer_text + ": the client gave up before the handshake completed");
        return;
    case RDMA_CM_EVENT_ESTABLISHED:
        if (c->is_client) break;
        if (c->state == ConnState::Accepting) established(c);
        return;
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
        on_disconnect_event(c, ev);
        return;
    case RDMA_CM_EVENT_DEVICE_REMOVAL: {
        // The whole device goes: this loop lets go of it at once (this
        // connection included), the others from their device watch.
        Device *d = c->res.id && c->res.id->verbs ? c->loop->t->devices.of(c->res.id->verbs) : nullptr;
        if (d) device_lost(c->loop, d, rdma_event_str(ev.event));
        else conn_lose_device(c, rdma_event_str(ev.event));
        return;
    }
    case RDMA_CM_EVENT_ADDR_CHANGE:
        // The path holds the old hardware address: the peer's packets no
        // longer reach us.  Fail now rather than at the keepalive bound
        // (one already disconnected has its own end).
        if (reached(c, kDisconnected)) return;
        c->loop->t->counters.addr_change_connections += 1;
        conn_fail(c, -ENODEV,
                  format("%s: %s: the local address moved to another hardware address (a bonding failover); hint: "
                         "connect again, a new connection takes the new path",
                         c->peer_text.c_str(), rdma_event_str(ev.event)));
        return;
    default:
        break;
    }
    if (c->is_client) client_event(c, ev, pdata, plen);
}

void conn_accept_on_target(void *arg)
{
    auto *c = static_cast<tw_conn *>(arg);
    tw_transport_loop *l = c->loop;
    tw_transport *t = l->t;
    l->conns.insert(c);
    ensure_tick(l);
    if (c->state != ConnState::Accepting) return; // failed meanwhile; the error is pending
    c->deadline_ns = now_ns(t) + t->cfg.dead_peer_ms * 1000000ull;
    std::string why;
    int rc = setup_qp(c, &why);
    if (rc == -EINVAL) {
        // rdma_create_qp asks the CM for the QP attributes; EINVAL means the
        // CM state moved on: the client rejected (gave up) meanwhile.
        logf(t, TW_LOG_DEBUG, "incoming connection from %s abandoned by the client before accept: %s",
             c->peer_text.c_str(), why.c_str());
        t->counters.handshakes_aborted += 1;
        conn_fail(c, -ECONNABORTED,
                  "accept from " + c->peer_text + ": the client gave up before the handshake completed");
        return;
    }
    if (rc) {
        RejectReason reason = rc == -ENOBUFS ? RejectReason::PoolExhausted : RejectReason::Resources;
        WireReject rej = reject_make(reason, "server: " + why);
        rdma_reject(c->res.id, &rej, sizeof rej);
        logf(t, TW_LOG_WARN, "refused RDMA connection from %s: %s", c->peer_text.c_str(), why.c_str());
        t->counters.handshakes_aborted += 1;
        conn_fail(c, rc, "accept from " + c->peer_text + ": " + why);
        return;
    }
    apply_peer(c, c->client_hello);
    WireHello wire = hello_to_wire(own_hello(c));
    rdma_conn_param p = conn_param(c, &wire, sizeof wire);
    if (rdma_accept(c->res.id, &p) != 0) {
        int err = errno;
        logf(t, TW_LOG_DEBUG, "incoming connection from %s abandoned before accept: %s", c->peer_text.c_str(),
             call_failed("rdma_accept", err).c_str());
        t->counters.handshakes_aborted += 1;
        conn_fail(c, -ECONNABORTED, "accept from " + c->peer_text + ": " + call_failed("rdma_accept", err));
    }
}

void conn_fail(tw_conn *c, int code, const std::string &text)
{
    if (c->error) return;
    tw_transport *t = c->loop->t;
    c->error = code;
    c->last_error = text;
    c->host.error_pending = true;
    logf(t, TW_LOG_DEBUG, "connection %s failed: %s", c->peer_text.c_str(), text.c_str());
    rma_on_fail(c);
    // A failed (or dead) peer loses its right to write at once; the bytes
    // it wrote stay readable.
    grant_revoke(c, c->grant);
    grant_revoke(c, c->resize.next);
    if (c->state != ConnState::Established || reached(c, kHostClosed)) {
        // No data can be lost: release the verbs resources now (a client that
        // timed out lets the server see its request die).
        conn_teardown(c);
    } else if (c->res.id && !reached(c, kDisconnected)) {
        mark_reached(c, kDisconnected);
        rdma_disconnect(c->res.id);
    }
    if (reached(c, kHostClosed) && !reached(c, kReaped)) {
        mark_reached(c, kReaped);
        c->loop->reap.push_back(c);
    }
    mark_ready(c);
}

void conn_teardown(tw_conn *c)
{
    tw_transport_loop *l = c->loop;
    const Settings &s = l->t->cfg;
    if (c->serial) {
        l->serials.erase(c->serial);
        c->serial = 0;
    }
    // Withdraw the rkey before anything else: once the window is gone no
    // peer (nor anyone holding its rkey) can reach the block, so it can be
    // reused at once.
    bool revoked = resize_teardown(c, grant_revoke(c, c->grant));
    rma_drop_windows(c); // before the QP: a bound window would hold its destruction
    if (c->res.id) {
        if (c->res.qp && !reached(c, kDisconnected) && c->state == ConnState::Established) rdma_disconnect(c->res.id);
        if (c->res.qp) {
            uint32_t qp_num = c->res.qp->qp_num;
            c->res.ldev->qps.erase(qp_num);
            rdma_destroy_qp(c->res.id);
            cq_settle(c->res.ldev, c->res.cq_slot, qp_num);
        }
        c->res.qp = nullptr;
        l->t->reaper.destroy(c->res.id);
        c->res.id = nullptr;
    }
    if (c->res.ldev && c->res.cq_slot >= 0)
        cq_release(c->res.ldev, c->res.cq_slot, static_cast<int>(s.sq_depth + s.recv_depth));
    c->res.cq_slot = -1;
    if (c->res.ldev && c->res.srq_slot >= 0) c->res.ldev->receives->release(c->res.srq_slot, s.recv_depth);
    c->res.srq_slot = -1;
    if (c->res.block) {
        if (revoked) c->res.ldev->pool->give_back(c->res.block);
        else c->res.ldev->pool->retire(c->res.block);
        c->res.block = nullptr;
    }
    if (c->state != ConnState::Finished && c->listener) c->listener = nullptr;
    c->state = ConnState::Finished;
}

void conn_close(tw_conn *c)
{
    tw_transport_loop *l = c->loop;
    mark_reached(c, kHostClosed);
    c->host.cb = nullptr;
    c->rx.borrowed = false;
    // Closing with unread bytes is an abortive close, as with TCP: the peer
    // gets a reset (DISCONNECTED without SHUTDOWN), not a clean end.
    bool unread = c->rx.tail > c->rx.head && !c->rx.rd_shut;
    // Windows go now; a transfer the device may still make into (or from)
    // application memory is stopped by a reset, never waited for.
    bool rma_busy = rma_on_close(c);
    if (c->state != ConnState::Established || c->error || reached(c, kDisconnected) || unread || rma_busy ||
        l->t->cfg.linger_ms == 0) {
        if (c->state != ConnState::Finished) conn_teardown(c);
        if (!reached(c, kReaped)) {
            mark_reached(c, kReaped);
            l->reap.push_back(c);
        }
        return;
    }
    // Healthy: flush what was accepted, send SHUTDOWN, wait (bounded) for
    // the peer to end too, then disconnect.
    c->tx.wr_shut = true;
    owe(c, kOweShutdown);
    c->deadline_ns = now_ns(l->t) + l->t->cfg.linger_ms * 1000000ull;
    conn_pump(c);
    conn_check_linger(c);
}

void conn_check_linger(tw_conn *c)
{
    if (!reached(c, kHostClosed) || reached(c, kReaped)) return;
    // Done when both ends said SHUTDOWN and ours is acknowledged, or when
    // the connection is gone anyway (disconnected, failed).
    bool clean = reached(c, kShutdownAcked) && c->rx.peer_eof;
    if (!clean && !reached(c, kDisconnected) && !c->error) return;
    conn_teardown(c);
    mark_reached(c, kReaped);
    c->loop->reap.push_back(c);
}

void conn_tick(tw_conn *c, uint64_t now)
{
    tw_transport *t = c->loop->t;
    const Settings &s = t->cfg;
    if (c->state == ConnState::Finished || reached(c, kReaped)) return;
    if (reached(c, kHostClosed)) {
        if (c->deadline_ns && now >= c->deadline_ns) {
            logf(t, TW_LOG_DEBUG, "connection %s: linger of %u ms ended before the peer finished", c->peer_text.c_str(),
                 s.linger_ms);
            conn_teardown(c);
            mark_reached(c, kReaped);
            c->loop->reap.push_back(c);
        }
        return;
    }
    if (c->state != ConnState::Established) {
        if (c->state != ConnState::Queued && c->deadline_ns && now >= c->deadline_ns && !c->error) {
            if (!c->is_client) t->counters.handshakes_aborted += 1;
            std::string detail;
            if (c->is_client)
                detail = format("; address resolved %s after %u step(s)",
                                c->client.addr_resolved_ns
                                    ? format("%llu ms after the start",
                                             static_cast<unsigned long long>(
                                                 (c->client.addr_resolved_ns - c->client.started_ns) / 1000000ull))
                                          .c_str()
                                    : "never",
                                c->client.resolve_steps);
            conn_fail(c, -ETIMEDOUT,
                      format("%s %s timed out after %u ms (%s%s)", c->is_client ? "connect to" : "accept from",
                             c->peer_text.c_str(), c->is_client ? c->client.timeout_ms : s.dead_peer_ms,
                             state_name(c->state), detail.c_str()));
        }
        return;
    }
    if (c->error || reached(c, kDisconnected)) return;
    uint64_t idle = now - c->live.last_rx_ns;
    if (idle >= s.dead_peer_ms * 1000000ull) {
        conn_fail(c, -TW_EPEERDEAD,
                  format("peer %s silent for %llu ms (rdma.dead_peer_ms = %u): no completion, no keepalive answer",
                         c->peer_text.c_str(), static_cast<unsigned long long>(idle / 1000000ull), s.dead_peer_ms));
        return;
    }
    if (idle >= s.keepalive_ms * 1000000ull && now - c->live.ka_sent_ns >= s.keepalive_ms * 1000000ull) {
        owe(c, kOweKeepalive);
        c->live.ka_sent_ns = now;
        conn_pump(c);
    }
    resize_on_tick(c, now);
}

} // namespace twrdma
