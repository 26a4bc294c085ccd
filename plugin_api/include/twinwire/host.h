/* SPDX-License-Identifier: MIT */
/**
 * @file twinwire/host.h
 * Services the host (the twinwire framework, or any other program that loads
 * a transport plugin) hands to a plugin.  Through this table a plugin watches
 * file descriptors, runs timers, posts work to other event-loop threads, logs,
 * reads its configuration and reads the clock, so it never links libevent or
 * the framework.
 *
 * Threading: a host runs one event loop (tw_loop) per thread.  Functions that
 * take a tw_loop, tw_watch or tw_timer must be called on that loop's thread,
 * except run_in_loop, which any thread may call.  log, log_enabled,
 * config_get and now_ns may be called from any thread.
 *
 * Lifetime: the table and everything it points to stay valid from the
 * plugin's init until its fini returns.  A tw_loop stays valid from the
 * plugin's loop_attach until its loop_detach returns.
 */
#ifndef TWINWIRE_HOST_H
#define TWINWIRE_HOST_H

#include <twinwire/abi.h>

#include <stdarg.h> /* va_list, for vlog */

TW_BEGIN_DECLS

struct tw_transport_ops; /* twinwire/transport.h, for transport_ops */

/** One event loop of the host; one per thread.  Opaque to plugins. */
typedef struct tw_loop tw_loop;
/** A watch on a file descriptor, owned by one loop.  Opaque. */
typedef struct tw_watch tw_watch;
/** A one-shot or periodic timer, owned by one loop.  Opaque. */
typedef struct tw_timer tw_timer;

/** Readiness bits for watch_add / watch_set and the watch callback. */
enum tw_watch_events { TW_WATCH_READ = 1u << 0, TW_WATCH_WRITE = 1u << 1 };

/** Log levels, most severe first. */
enum tw_log_level { TW_LOG_ERROR = 0, TW_LOG_WARN = 1, TW_LOG_INFO = 2, TW_LOG_DEBUG = 3, TW_LOG_TRACE = 4 };

/** Called on the loop's thread when `fd` is ready for `events` (a subset of
 *  the watched set).  The callback may modify or delete its own watch. */
typedef void (*tw_watch_cb)(tw_watch *watch, int fd, uint32_t events, void *arg);
/** Called on the loop's thread when the timer expires.  The callback may
 *  re-arm, disarm or delete its own timer. */
typedef void (*tw_timer_cb)(tw_timer *timer, void *arg);
/** A unit of work for run_in_loop. */
typedef void (*tw_task_fn)(void *arg);

/** What a host puts in tw_host.version: its TW_ABI_MINOR (see abi.h). */
#define TW_HOST_VERSION TW_ABI_MINOR

/**
 * The host services table.  `size` is sizeof(struct tw_host) as the host was
 * built, at least TW_HOST_SIZE_V1 (a plugin refuses a smaller table in init
 * with -TW_EABI and the reason).  Every member inside TW_HOST_SIZE_V1 is
 * always present (never NULL); a plugin calls a member past it only when
 * TW_HAS_MEMBER(host, struct tw_host, member) is true and the member is not
 * NULL, and otherwise does without (e.g. vlog: format the line itself and
 * call log).  A host may hand out a table larger than the plugin knows.
 */
struct tw_host {
    uint32_t size;    /**< sizeof(struct tw_host) in the host's build. */
    uint32_t version; /**< TW_HOST_VERSION (the host's TW_ABI_MINOR). */
    void *host_data;  /**< Private to the host; plugins must not touch it. */

    /* --- logging ------------------------------------------------------ */

    /** Log one line (no trailing newline needed) at `level`, printf-style.
     *  The host adds the time, level and the plugin's name. */
    void (*log)(const struct tw_host *host, int level, const char *fmt, ...) TW_PRINTF(3, 4);
    /** Non-zero when a message at `level` would be written; lets a plugin
     *  skip formatting expensive debug output. */
    int (*log_enabled)(const struct tw_host *host, int level);

    /* --- configuration ------------------------------------------------ */

    /**
     * Look up a configuration value by its full key, e.g. "rdma.ring_size"
     * (the plugin's keys are "<plugin name>.<key>").  Returns the value as
     * text, or NULL when it is not set.  When `origin` is not NULL it gets a
     * text naming where the value came from ("twinwire.conf:12",
     * "environment TWINWIRE_RDMA_RING_SIZE", "api"), for error messages.
     * The host reports keys under the plugin's prefix that the plugin never
     * looked up as unknown keys, so look up every key you support.
     */
    const char *(*config_get)(const struct tw_host *host, const char *key, const char **origin);

    /* --- clock -------------------------------------------------------- */

    /** CLOCK_MONOTONIC in nanoseconds. */
    uint64_t (*now_ns)(const struct tw_host *host);

    /* --- file descriptor watches (level-triggered, persistent) ---------- */

    /**
     * Watch `fd` on `loop` for `events` (TW_WATCH_*; 0 = registered but
     * idle).  The callback runs on the loop's thread each time the fd is
     * ready, until the watch is deleted.  Returns 0 and *out, or -errno.
     */
    int (*watch_add)(tw_loop *loop, int fd, uint32_t events, tw_watch_cb cb, void *arg, tw_watch **out);
    /** Change the watched events (0 pauses the watch).  Returns 0 or -errno. */
    int (*watch_set)(tw_watch *watch, uint32_t events);
    /** Stop watching and free the watch (the fd is not closed).  Safe from
     *  inside the watch's own callback; no callback runs after it returns. */
    void (*watch_del)(tw_watch *watch);

    /* --- timers --------------------------------------------------------- */

    /** Create a disarmed timer on `loop`.  Returns 0 and *out, or -errno. */
    int (*timer_add)(tw_loop *loop, tw_timer_cb cb, void *arg, tw_timer **out);
    /** Arm (or re-arm) the timer: first expiry after `delay_ns`, then every
     *  `period_ns` (0 = one-shot).  Returns 0 or -errno. */
    int (*timer_arm)(tw_timer *timer, uint64_t delay_ns, uint64_t period_ns);
    /** Disarm the timer; it can be armed again. */
    void (*timer_disarm)(tw_timer *timer);
    /** Disarm and free the timer.  Safe from inside its own callback. */
    void (*timer_del)(tw_timer *timer);

    /* --- threads -------------------------------------------------------- */

    /**
     * Run fn(arg) on `loop`'s thread, soon, never inline (even when called
     * from that thread).  Any thread may call it.  Tasks posted to one loop
     * run in the order they were posted.  Returns 0, or -ESHUTDOWN when the
     * loop is stopping (fn will not run; the caller still owns arg).
     */
    int (*run_in_loop)(tw_loop *loop, tw_task_fn fn, void *arg);
    /** The loop's index, 0 .. number of loops - 1 (stable; for logs and
     *  per-loop arrays). */
    unsigned (*loop_index)(const tw_loop *loop);
    /** Non-zero when called on `loop`'s own thread. */
    int (*in_loop_thread)(const tw_loop *loop);

    /* --- end of the ABI 1.0 table (TW_HOST_SIZE_V1) --------------------- */

    /** log with a va_list, for a plugin that has its own printf-style
     *  wrapper.  Since ABI 1.1: check TW_HAS_MEMBER before calling. */
    void (*vlog)(const struct tw_host *host, int level, const char *fmt, va_list ap) TW_PRINTF(3, 0);

    /* --- ABI 1.2: a plugin that stacks on another transport ------------- */

    /**
     * The operations table of another transport, for a plugin that wraps
     * one (the `fault` test transport wraps the one named by fault.inner).
     * `name` is "tcp" (built in) or a plugin's name, found and checked
     * exactly as the host loads any plugin (plugin_path, trust checks,
     * ABI checks, the declared name).  Returns 0 and *out, or a negative
     * code with a one-line reason in `why`: -ENOENT (not found or not
     * loadable), -ELOOP (the caller's own name: no transport wraps
     * itself), -EINVAL (no name, no out).
     *
     * *out has every member set: optional operations the transport leaves
     * out are the host's stubs, which return -EOPNOTSUPP, as for the
     * host's own calls; `caps` says what the transport promises.  Nothing
     * is initialised: the caller calls (*out)->init with its own host
     * table (the inner transport reads its own "<name>." keys through
     * it), attaches it to loops, and finalises it in its own fini.  The
     * host logs the inner transport's lines under the caller's name.
     *
     * Lifetime: *out and the code behind it stay valid until the calling
     * plugin's fini returns; the caller must have finalised the inner
     * transport by then.  Call it from init, on the host's main thread.
     * Since ABI 1.2: check TW_HAS_MEMBER before calling.
     */
    int (*transport_ops)(const struct tw_host *host, const char *name, const struct tw_transport_ops **out, char *why,
                         size_t why_len);
};

/** Size of the ABI 1.0 host table: the smallest a plugin must accept. */
#define TW_HOST_SIZE_V1 TW_SIZE_THROUGH(struct tw_host, in_loop_thread)

#if TW_ABI_LP64
TW_ABI_ASSERT(TW_HOST_SIZE_V1 == 128, tw_host_size_v1);
TW_ABI_ASSERT(sizeof(struct tw_host) == 144, tw_host_size);
TW_ABI_ASSERT(offsetof(struct tw_host, version) == 4, tw_host_version);
TW_ABI_ASSERT(offsetof(struct tw_host, host_data) == 8, tw_host_host_data);
TW_ABI_ASSERT(offsetof(struct tw_host, log) == 16, tw_host_log);
TW_ABI_ASSERT(offsetof(struct tw_host, log_enabled) == 24, tw_host_log_enabled);
TW_ABI_ASSERT(offsetof(struct tw_host, config_get) == 32, tw_host_config_get);
TW_ABI_ASSERT(offsetof(struct tw_host, now_ns) == 40, tw_host_now_ns);
TW_ABI_ASSERT(offsetof(struct tw_host, watch_add) == 48, tw_host_watch_add);
TW_ABI_ASSERT(offsetof(struct tw_host, watch_set) == 56, tw_host_watch_set);
TW_ABI_ASSERT(offsetof(struct tw_host, watch_del) == 64, tw_host_watch_del);
TW_ABI_ASSERT(offsetof(struct tw_host, timer_add) == 72, tw_host_timer_add);
TW_ABI_ASSERT(offsetof(struct tw_host, timer_arm) == 80, tw_host_timer_arm);
TW_ABI_ASSERT(offsetof(struct tw_host, timer_disarm) == 88, tw_host_timer_disarm);
TW_ABI_ASSERT(offsetof(struct tw_host, timer_del) == 96, tw_host_timer_del);
TW_ABI_ASSERT(offsetof(struct tw_host, run_in_loop) == 104, tw_host_run_in_loop);
TW_ABI_ASSERT(offsetof(struct tw_host, loop_index) == 112, tw_host_loop_index);
TW_ABI_ASSERT(offsetof(struct tw_host, in_loop_thread) == 120, tw_host_in_loop_thread);
TW_ABI_ASSERT(offsetof(struct tw_host, vlog) == 128, tw_host_vlog);
TW_ABI_ASSERT(offsetof(struct tw_host, transport_ops) == 136, tw_host_transport_ops);
#endif

TW_END_DECLS

#endif /* TWINWIRE_HOST_H */
