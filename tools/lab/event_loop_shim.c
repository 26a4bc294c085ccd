// SPDX-License-Identifier: MIT
// LD_PRELOAD for ib_send_lat -e (not installed): before perftest's blocking
// ibv_get_cq_event reads the completion channel, wait for the channel the
// way an event loop must, so the anchor pays what any loop-based transport
// pays and nothing else (tools/lab/latency-layers.sh):
//   TW_SHIM_WAIT=epoll     one epoll_wait on the channel's fd
//   TW_SHIM_WAIT=libevent  one turn of a libevent loop (EVLOOP_ONCE) that
//                          watches the fd with a persistent read event
//   TW_SHIM_ONCE=1         with either: wait only before every second
//                          call, the half that sleeps.  perftest waits for
//                          its send completion and then its receive, in turn;
//                          a loop (twinwire's) wakes once per round trip.
//                          The first kCalibrate calls read plainly, timed,
//                          and the slower half (by call parity) is chosen.
// It links libevent only, never rdma-core: the real ibv_get_cq_event is the
// next one in the lookup order (RTLD_NEXT), by its symbol version.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE // dlvsym, RTLD_NEXT
#endif
#include <dlfcn.h>
#include <errno.h>
#include <event2/event.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

typedef int (*get_cq_event_fn)(struct ibv_comp_channel *, struct ibv_cq **, void **);

/// One waiter per channel: perftest may sleep on more than one.
struct waiter {
    int fd;
    int epfd;
    struct event_base *base;
    struct event *readable;
};

enum { kMaxChannels = 8 };
static struct waiter g_waiters[kMaxChannels];
static int g_count;
static unsigned long g_waits;

enum { kCalibrate = 64 };
static unsigned long g_calls;
static unsigned long long g_parity_ns[2]; // plain reads' time by call parity
static int g_sleeping_parity = -1;        // chosen after kCalibrate calls

/// Read once: the check runs before every call of the measured loop.
static int once_per_round_trip(void)
{
    static int once = -1;
    if (once < 0) {
        const char *value = getenv("TW_SHIM_ONCE");
        once = value && strcmp(value, "1") == 0;
    }
    return once;
}

static unsigned long long monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int use_libevent(void)
{
    const char *mode = getenv("TW_SHIM_WAIT");
    return mode && strcmp(mode, "libevent") == 0;
}

/// Printed at exit, so a run shows the shim was loaded and waited.
__attribute__((destructor)) static void report(void)
{
    if (g_waits)
        fprintf(stderr, "event_loop_shim: %lu waits (%s) in %lu calls\n", g_waits,
                use_libevent() ? "libevent" : "epoll", g_calls);
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg; // the read itself is the real ibv_get_cq_event's
}

static struct waiter *waiter_for(int fd)
{
    for (int i = 0; i < g_count; ++i)
        if (g_waiters[i].fd == fd) return &g_waiters[i];
    if (g_count == kMaxChannels) return NULL;
    struct waiter *w = &g_waiters[g_count];
    memset(w, 0, sizeof *w);
    w->fd = fd;
    w->epfd = -1;
    if (use_libevent()) {
        w->base = event_base_new();
        w->readable = w->base ? event_new(w->base, fd, EV_READ | EV_PERSIST, on_readable, NULL) : NULL;
        if (!w->readable || event_add(w->readable, NULL) != 0) return NULL;
    } else {
        struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = fd}};
        w->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) return NULL;
    }
    g_count++;
    return w;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
    static get_cq_event_fn real;
    if (!real) real = (get_cq_event_fn)dlvsym(RTLD_NEXT, "ibv_get_cq_event", "IBVERBS_1.1");
    if (!real) {
        fprintf(stderr, "event_loop_shim: libibverbs' ibv_get_cq_event@IBVERBS_1.1 not found: %s\n", dlerror());
        abort();
    }
    struct waiter *w = waiter_for(channel->fd);
    if (!w) {
        fprintf(stderr, "event_loop_shim: cannot watch completion channel fd %d: %s\n", channel->fd, strerror(errno));
        abort();
    }
    unsigned long call = g_calls++;
    if (once_per_round_trip()) {
        if (call < kCalibrate) {
            unsigned long long t0 = monotonic_ns();
            int rc = real(channel, cq, cq_context);
            g_parity_ns[call & 1] += monotonic_ns() - t0;
            if (call + 1 == kCalibrate) g_sleeping_parity = g_parity_ns[1] > g_parity_ns[0];
            return rc;
        }
        if ((int)(call & 1) != g_sleeping_parity) return real(channel, cq, cq_context);
    }
    g_waits++;
    if (w->base) {
        event_base_loop(w->base, EVLOOP_ONCE);
    } else {
        struct epoll_event ev;
        while (epoll_wait(w->epfd, &ev, 1, -1) < 0 && errno == EINTR) {
        }
    }
    return real(channel, cq, cq_context);
}
