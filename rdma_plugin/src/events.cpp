// SPDX-License-Identifier: MIT
// Level-triggered readiness: which TW_EV_* a connection would report now,
// and delivery from the loop (never from inside an operation).
#include "core.hpp"
#include "rma.hpp"

namespace twrdma {

void mark_ready(tw_conn *c)
{
    if (c->in_ready || c->host_closed || c->reaped) return;
    c->in_ready = true;
    c->loop->ready.push_back(c);
}

uint32_t level_events(const tw_conn *c)
{
    uint32_t ev = 0;
    // A handshake that failed reports TW_EV_ERROR only: READ/WRITE never
    // come before TW_EV_CONNECTED.
    if (!c->was_established) return 0;
    if (c->error || c->rx_tail > c->rx_head || c->peer_eof || c->rd_shut) ev |= TW_EV_READ;
    if (c->borrowed) ev &= ~TW_EV_READ;
    if (c->state == ConnState::Established && !c->error && !c->wr_shut && !c->write_error && !c->sendbuf_out &&
        tx_space(c) > 0)
        ev |= TW_EV_WRITE;
    // The peer closed cleanly: a write fails at once (-EPIPE), and a writer
    // waiting for room must hear it, as a socket reports POLLOUT then.
    if (c->write_error && !c->wr_shut) ev |= TW_EV_WRITE;
    return ev;
}

bool deliverable(const tw_conn *c)
{
    if (!c->cb || c->host_closed || c->reaped) return false;
    return c->connected_pending || c->error_pending || rma_has_completions(c) || (level_events(c) & c->interest);
}

void deliver(tw_conn *c)
{
    // RMA callbacks first: one of them may close the connection.
    if (rma_has_completions(c)) {
        rma_run_completions(c);
        if (c->host_closed || c->reaped) return;
    }
    uint32_t ev = 0;
    if (c->connected_pending) {
        ev |= TW_EV_CONNECTED;
        c->connected_pending = false;
    }
    if (c->error_pending) {
        ev |= TW_EV_ERROR;
        c->error_pending = false;
    }
    ev |= level_events(c) & c->interest;
    if (ev) {
        // Reads and writes inside the callback leave their pump to its end:
        // one pump posts a reply and reports what was read, and several
        // writes go out as one message.
        c->in_callback = true;
        c->cb(c, ev, c->cb_arg);
        c->in_callback = false;
    }
    pump_if_due(c);
}

void pump_if_due(tw_conn *c)
{
    if (!c->pump_due) return;
    c->pump_due = false;
    if (c->reaped) return;
    conn_pump(c);
    if (c->host_closed) conn_check_linger(c);
}

} // namespace twrdma
