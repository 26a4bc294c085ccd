/* SPDX-License-Identifier: MIT */
/*
 * Events no file descriptor announces: TW_EV_CONNECTED (an AF_UNIX connect
 * completes at once, inside the host's call, where no callback may run) and
 * TW_EV_ERROR.  They wait on the loop's list; the host asks
 * has_pending_data() before it sleeps and then calls process_pending_data().
 */
#include "unixsock.h"

static void unlink_conn(tw_conn *c)
{
    struct tw_transport_loop *tl = c->tloop;
    if (c->prev) c->prev->next = c->next;
    else tl->pending_head = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static int queued(const tw_conn *c) { return c->prev || c->tloop->pending_head == c; }

/* Remember `events`; queue the connection once the host can be told. */
void us_pending_add(tw_conn *c, uint32_t events)
{
    c->pending |= events;
    /* Rule 1: nothing before set_callback.  Queued later by set_callback. */
    if (!c->cb || !c->watch || queued(c)) return;
    c->next = c->tloop->pending_head;
    if (c->next) c->next->prev = c;
    c->tloop->pending_head = c;
}

void us_pending_forget(tw_conn *c)
{
    if (queued(c)) unlink_conn(c);
    c->pending = 0;
}

int us_has_pending_data(struct tw_transport_loop *tl) { return tl->pending_head != NULL; }

/* Level-triggered READ/WRITE come from the fd watch, and only once the
 * connection is up and has a callback. */
void us_update_watch(tw_conn *c)
{
    uint32_t events = 0;
    if (!c->watch) return;
    if (c->up && c->cb && c->fd >= 0) {
        if (c->interest & TW_EV_READ) events |= TW_WATCH_READ;
        if (c->interest & TW_EV_WRITE) events |= TW_WATCH_WRITE;
    }
    c->tloop->transport->host->watch_set(c->watch, events);
}

int us_process_pending_data(struct tw_transport_loop *tl)
{
    int called = 0;
    /* One pass over what is queued now; a callback may close any of them
     * (close unlinks) or queue more (next pass). */
    int n = 0;
    for (tw_conn *c = tl->pending_head; c; c = c->next) n++;
    while (n-- > 0 && tl->pending_head) {
        tw_conn *c = tl->pending_head;
        uint32_t events = c->pending;
        unlink_conn(c);
        c->pending = 0;
        if (events & TW_EV_CONNECTED) {
            c->up = 1;
            us_update_watch(c);
        }
        c->cb(c, events, c->arg); /* may close c: not touched afterwards */
        called++;
    }
    return called;
}
