// SPDX-License-Identifier: MIT
// A connection's life: creation, the fd watch and timers on its loop, event
// delivery to the host (never from inside an operation), failure and close.
#include "tcp_internal.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <new>

namespace twinwire::tcp {
namespace {

uint32_t watch_events_for(const tw_conn *c)
{
    switch (c->state) {
    case ConnState::Connecting:
    case ConnState::Lingering:
        return TW_WATCH_WRITE;
    case ConnState::Announcing:
    case ConnState::Failed:
        return 0;
    case ConnState::Open:
        break;
    }
    uint32_t w = 0;
    if (c->interest & TW_EV_READ) w |= TW_WATCH_READ;
    // Submitted bytes drain from the loop whatever the host asked for.
    if ((c->interest & TW_EV_WRITE) || c->out.unsent()) w |= TW_WATCH_WRITE;
    return w;
}

bool has_buffered_input(const tw_conn *c)
{
    return c->state == ConnState::Open && (c->interest & TW_EV_READ) && c->in.left() && !c->in.lent;
}

/// Run the host's callback.  Returns false when the host closed the
/// connection inside it: it is gone then.
bool deliver(tw_conn *c, uint32_t events)
{
    if (!events || !c->cb) return true;
    c->in_callback = true;
    c->cb(c, events, c->arg);
    c->in_callback = false;
    if (c->close_requested) {
        conn_close(c);
        return false;
    }
    return true;
}

void unlink_lingering(tw_conn *c)
{
    for (tw_conn **p = &c->tloop->lingering; *p; p = &(*p)->linger_next) {
        if (*p == c) {
            *p = c->linger_next;
            return;
        }
    }
}

void on_fd(tw_watch *, int, uint32_t ready, void *arg)
{
    auto *c = static_cast<tw_conn *>(arg);
    uint32_t events = 0;
    switch (c->state) {
    case ConnState::Connecting:
        conn_finish_connect(c);
        break;
    case ConnState::Lingering:
        if (conn_flush_out(c) || c->error) conn_release(c);
        return;
    case ConnState::Announcing:
    case ConnState::Failed:
        break;
    case ConnState::Open:
        if (ready & TW_WATCH_WRITE) {
            if (c->out.unsent()) conn_flush_out(c);
            if (!c->out.unsent() && (c->interest & TW_EV_WRITE)) events |= TW_EV_WRITE;
        }
        if ((ready & TW_WATCH_READ) && (c->interest & TW_EV_READ)) events |= TW_EV_READ;
        break;
    }
    events |= conn_take_pending(c);
    conn_update_watch(c);
    deliver(c, events);
}

void on_kick(tw_timer *, void *arg)
{
    auto *c = static_cast<tw_conn *>(arg);
    uint32_t events = conn_take_pending(c);
    if (has_buffered_input(c)) events |= TW_EV_READ;
    if (!deliver(c, events)) return;
    // Level-triggered: bytes kept from a partial recv_buf_return stay readable.
    if (has_buffered_input(c)) conn_kick(c);
}

void on_deadline(tw_timer *, void *arg)
{
    auto *c = static_cast<tw_conn *>(arg);
    if (c->state == ConnState::Connecting) conn_connect_timed_out(c);
    else if (c->state == ConnState::Lingering) conn_release(c);
}

/// Keep flushing submitted bytes after close, for at most linger_ms.
bool start_linger(tw_conn *c)
{
    if (conn_arm_deadline(c, c->tloop->transport->settings.linger_ms) < 0) return false;
    if (c->kick) {
        c->host->timer_del(c->kick);
        c->kick = nullptr;
    }
    c->state = ConnState::Lingering;
    c->linger_next = c->tloop->lingering;
    c->tloop->lingering = c;
    conn_update_watch(c);
    return true;
}

} // namespace

tw_conn *conn_new(tw_transport_loop *tloop, int fd, ConnState state)
{
    auto *c = new (std::nothrow) tw_conn;
    if (!c) return nullptr;
    c->tloop = tloop;
    c->host = tloop->transport->host;
    c->fd = fd;
    c->state = state;
    c->stats.size = sizeof c->stats;
    c->stats.version = TW_CONN_STATS_VERSION;
    tloop->transport->open++;
    return c;
}

int conn_attach_loop(tw_conn *c)
{
    tw_loop *loop = c->tloop->loop;
    if (!c->kick) {
        if (int rc = c->host->timer_add(loop, on_kick, c, &c->kick); rc < 0) return rc;
    }
    if (!c->watch && c->fd >= 0) {
        uint32_t w = watch_events_for(c);
        if (int rc = c->host->watch_add(loop, c->fd, w, on_fd, c, &c->watch); rc < 0) return rc;
        c->watched = w;
    }
    return 0;
}

void conn_update_watch(tw_conn *c)
{
    if (!c->watch) return;
    uint32_t w = watch_events_for(c);
    if (w == c->watched) return;
    if (int rc = c->host->watch_set(c->watch, w); rc < 0) {
        log_line(c->host, TW_LOG_ERROR, "tcp: watch_set on fd %d failed: %d", c->fd, rc);
        return;
    }
    c->watched = w;
}

void conn_kick(tw_conn *c)
{
    if (c->kick && c->cb) c->host->timer_arm(c->kick, 0, 0);
}

uint32_t conn_take_pending(tw_conn *c)
{
    uint32_t events = c->pending;
    c->pending = 0;
    if ((events & TW_EV_CONNECTED) && c->state == ConnState::Announcing) {
        c->state = ConnState::Open;
        conn_update_watch(c);
    }
    return events;
}

int conn_arm_deadline(tw_conn *c, uint32_t ms)
{
    if (!c->deadline) {
        if (int rc = c->host->timer_add(c->tloop->loop, on_deadline, c, &c->deadline); rc < 0) return rc;
    }
    return c->host->timer_arm(c->deadline, uint64_t(ms) * 1000000u, 0);
}

void conn_fail(tw_conn *c, int err, const char *call)
{
    if (c->error) return;
    c->error = err;
    format_error(c->last_error, sizeof c->last_error, call, c->peer_text, err);
    // Submitted bytes can no longer reach the peer.
    c->out.off = c->out.len;
    c->pending |= TW_EV_ERROR;
    if (c->host->log_enabled(c->host, TW_LOG_DEBUG)) log_line(c->host, TW_LOG_DEBUG, "tcp: %s", c->last_error);
    conn_kick(c);
}

void conn_drop_socket(tw_conn *c)
{
    if (c->watch) {
        c->host->watch_del(c->watch);
        c->watch = nullptr;
        c->watched = 0;
    }
    if (c->fd >= 0) {
        ::close(c->fd);
        c->fd = -1;
    }
}

void conn_release(tw_conn *c)
{
    if (c->state == ConnState::Lingering) unlink_lingering(c);
    conn_drop_socket(c);
    if (c->kick) c->host->timer_del(c->kick);
    if (c->deadline) c->host->timer_del(c->deadline);
    free(c->out.data);
    free(c->in.data);
    c->tloop->transport->open--;
    delete c;
}

int conn_set_callback(tw_conn *c, tw_conn_cb cb, void *arg)
{
    if (!cb) return -EINVAL;
    c->cb = cb;
    c->arg = arg;
    // The first call runs on the owning loop's thread: register there.
    if (int rc = conn_attach_loop(c); rc < 0) return rc;
    if (c->pending || has_buffered_input(c)) conn_kick(c);
    return 0;
}

int conn_set_events(tw_conn *c, uint32_t events)
{
    if (events & ~uint32_t(TW_EV_READ | TW_EV_WRITE)) return -EINVAL;
    c->interest = events;
    conn_update_watch(c);
    if (has_buffered_input(c)) conn_kick(c);
    return 0;
}

void conn_close(tw_conn *c)
{
    if (c->in_callback) {
        // Freed when the callback returns (see deliver).
        c->close_requested = true;
        return;
    }
    c->cb = nullptr;
    if (c->incoming && c->state == ConnState::Announcing) c->tloop->transport->aborted++;
    bool healthy = c->state == ConnState::Open && !c->error && c->fd >= 0;
    if (healthy && c->out.unsent() && c->tloop->transport->settings.linger_ms > 0) {
        if (!conn_flush_out(c) && !c->error && start_linger(c)) return;
    }
    conn_release(c);
}

} // namespace twinwire::tcp
