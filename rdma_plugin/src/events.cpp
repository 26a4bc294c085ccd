// SPDX-License-Identifier: MIT
// Level-triggered readiness: which TW_EV_* a connection would report now,
// and delivery from the loop (never from inside an operation).
#include "core.hpp"
#include "rma.hpp"

namespace twrdma {

void mark_ready(tw_conn *c)
{
    if (c->host.in_ready || reached(c, kHostClosed) || reached(c, kReaped)) return;
    c->host.in_ready = true;
    c->loop->ready.push_back(c);
}

uint32_t level_events(const tw_conn *c)
{
    uint32_t ev = 0;
    // A handshake that failed reports TW_EV_ERROR only: READ/WRITE never
    // come before TW_EV_CONNECTED.
    if (!reached(c, kWasEstablished)) return 0;
    if (c->error || c->rx.tail > c->rx.head || c->rx.peer_eof || c->rx.rd_shut) ev |= TW_EV_READ;
    if (c->rx.borrowed) ev &= ~TW_EV_READ;
    if (c->state == ConnState::Established && !c->error && !c->tx.wr_shut && !c->tx.write_error && !c->tx.sendbuf_out &&
        tx_space(c) > 0)
        ev |= TW_EV_WRITE;
    // The peer closed cleanly: a write fails at once (-EPIPE), and a writer
    // waiting for room must hear it, as a socket reports POLLOUT then.
    if (c->tx.write_error && !c->tx.wr_shut) ev |= TW_EV_WRITE;
    return ev;
}

bool deliverable(const tw_conn *c)
{
    if (!c->host.cb || reached(c, kHostClosed) || reached(c, kReaped)) return false;
    return c->host.connected_pending || c->host.error_pending || rma_has_completions(c) ||
           (level_events(c) & c->host.interest);
}

void deliver(tw_conn *c)
{
    // RMA callbacks first: one of them may close the connection.
    if (rma_has_completions(c)) {
        rma_run_completions(c);
        if (reached(c, kHostClosed) || reached(c, kReaped)) return;
    }
    uint32_t ev = 0;
    if (c->host.connected_pending) {
        ev |= TW_EV_CONNECTED;
        c->host.connected_pending = false;
    }
    if (c->host.error_pending) {
        ev |= TW_EV_ERROR;
        c->host.error_pending = false;
    }
    ev |= level_events(c) & c->host.interest;
    if (ev) {
        // Reads and writes inside the callback leave their pump to its end:
        // one pump posts a reply and reports what was read, and several
        // writes go out as one message.
        c->host.in_callback = true;
        c->host.cb(c, ev, c->host.cb_arg);
        c->host.in_callback = false;
    }
    pump_if_due(c);
}

void pump_if_due(tw_conn *c)
{
    if (!c->host.pump_due) return;
    c->host.pump_due = false;
    if (reached(c, kReaped)) return;
    conn_pump(c);
    if (reached(c, kHostClosed)) conn_check_linger(c);
}

} // namespace twrdma
