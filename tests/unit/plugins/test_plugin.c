/* SPDX-License-Identifier: MIT */
/*
 * Plugins for the loader tests, one file built several ways.  Each variant
 * breaks exactly one rule of the ABI so its rejection reason can be checked:
 *   VARIANT_V2_SYMBOL      exports only the entry of the next major (TW_TEST_OTHER_MAJOR)
 *   VARIANT_INFO_ABI2      exports this major's symbol but says abi_major TW_TEST_OTHER_MAJOR
 *   VARIANT_NO_ACCEPT      leaves the required 'accept' operation NULL
 *   VARIANT_INIT_REFUSES   init refuses with -TW_ENODEVICE and a reason
 *   VARIANT_NEEDS_GONE     links a library that is not there at run time
 *   VARIANT_NO_ENTRY       exports nothing at all
 *   VARIANT_REASON_NO_NUL  init refuses, filling the whole reason buffer without a NUL
 *   VARIANT_INIT_NO_HANDLE init returns 0 and no transport
 *   VARIANT_CRASH_IN_ENTRY its entry point dies (SIGSEGV)
 *   VARIANT_CRASH_IN_INIT  its init dies (SIGSEGV)
 *   VARIANT_CHECKS_CONFIG  check_config validates rdma.window (1..64); init
 *                          refuses (no device), as on a host without RDMA
 *   VARIANT_SMALL_OPS      an operations table 8 bytes short of ABI 1.0's
 *   VARIANT_SMALL_INFO     a plugin info 8 bytes short of ABI 1.0's
 *   VARIANT_HALF_CLOSE_NO_SHUTDOWN  claims TW_CAP_HALF_CLOSE without 'shutdown'
 *   VARIANT_RMA_NO_POST    claims TW_CAP_RMA (ABI 1.3) with rma_expose and rma_revoke
 *                          but without rma_post
 *   VARIANT_WRAPS_ITSELF   init asks the host's transport_ops for its own name
 *                          and refuses with what it got (-ELOOP and the reason)
 * None of them moves data: the loader never gets that far with them, except
 * the init variants, whose init is the point.
 */
#include <twinwire/plugin.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef VARIANT_NEEDS_GONE
int tw_test_gone_function(void);
#endif

static int t_init(const struct tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    (void)host;
    (void)out;
    (void)why;
    (void)why_len;
#ifdef VARIANT_NEEDS_GONE
    tw_test_gone_function();
#endif
#if defined(VARIANT_REASON_NO_NUL)
    memset(why, 'x', why_len);
    return -TW_ENODEVICE;
#elif defined(VARIANT_INIT_NO_HANDLE)
    return 0;
#elif defined(VARIANT_WRAPS_ITSELF)
    const struct tw_transport_ops *inner = NULL;
    char reason[200] = "";
    int rc = host->transport_ops(host, "rdma", &inner, reason, sizeof reason);
    snprintf(why, why_len, "transport_ops(own name) = %s, table %s: %s", rc == -ELOOP ? "-ELOOP" : "not -ELOOP",
             inner ? "set" : "NULL", reason);
    return rc < 0 ? rc : -TW_ENODEVICE;
#elif defined(VARIANT_CRASH_IN_INIT)
    raise(SIGSEGV);
    return -TW_ENODEVICE;
#else
    snprintf(why, why_len, "test plugin: no device here");
    return -TW_ENODEVICE;
#endif
}

#ifdef VARIANT_CHECKS_CONFIG
static int t_check_config(const struct tw_host *host, char *why, size_t why_len)
{
    const char *origin = NULL;
    const char *v = host->config_get(host, "rdma.window", &origin);
    if (!v) return 0;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < 1 || n > 64) {
        snprintf(why, why_len, "rdma.window: bad value '%s' (%s): expected 1..64", v, origin ? origin : "?");
        return -TW_ECONFIG;
    }
    return 0;
}
#endif

static void t_fini(tw_transport *t) { (void)t; }
static int t_loop_attach(tw_transport *t, tw_loop *l, tw_transport_loop **o)
{
    (void)t;
    (void)l;
    (void)o;
    return -ENOTSUP;
}
static void t_loop_detach(tw_transport_loop *tl) { (void)tl; }
static int t_listen(tw_transport_loop *tl, const struct tw_listen_params *p, tw_listener **o)
{
    (void)tl;
    (void)p;
    (void)o;
    return -ENOTSUP;
}
#ifndef VARIANT_NO_ACCEPT
static int t_accept(tw_listener *l, tw_transport_loop *tl, tw_conn **o)
{
    (void)l;
    (void)tl;
    (void)o;
    return -EAGAIN;
}
#endif
static void t_listener_close(tw_listener *l) { (void)l; }
static int t_connect(tw_transport_loop *tl, const struct tw_connect_params *p, tw_conn **o)
{
    (void)tl;
    (void)p;
    (void)o;
    return -ENOTSUP;
}
static int t_set_callback(tw_conn *c, tw_conn_cb cb, void *a)
{
    (void)c;
    (void)cb;
    (void)a;
    return -ENOTSUP;
}
static int t_set_events(tw_conn *c, uint32_t e)
{
    (void)c;
    (void)e;
    return -ENOTSUP;
}
static ssize_t t_read(tw_conn *c, void *b, size_t n)
{
    (void)c;
    (void)b;
    (void)n;
    return -ENOTSUP;
}
static ssize_t t_readv(tw_conn *c, const struct iovec *v, int n)
{
    (void)c;
    (void)v;
    (void)n;
    return -ENOTSUP;
}
static ssize_t t_write(tw_conn *c, const void *b, size_t n)
{
    (void)c;
    (void)b;
    (void)n;
    return -ENOTSUP;
}
static ssize_t t_writev(tw_conn *c, const struct iovec *v, int n)
{
    (void)c;
    (void)v;
    (void)n;
    return -ENOTSUP;
}
static void t_close(tw_conn *c) { (void)c; }
static int t_get_error(tw_conn *c)
{
    (void)c;
    return 0;
}
static const char *t_last_error(tw_conn *c)
{
    (void)c;
    return "";
}

#ifdef VARIANT_RMA_NO_POST
static int t_rma_expose(tw_conn *c, void *a, size_t n, uint32_t m, tw_rma_exposure **o, void *d, size_t *dl)
{
    (void)c;
    (void)a;
    (void)n;
    (void)m;
    (void)o;
    (void)d;
    (void)dl;
    return -ENOTSUP;
}
static int t_rma_revoke(tw_rma_exposure *e, tw_rma_cb cb, void *arg)
{
    (void)e;
    (void)cb;
    (void)arg;
    return -ENOTSUP;
}
#endif

static const struct tw_transport_ops t_ops = {
#ifdef VARIANT_SMALL_OPS
    .size = TW_TRANSPORT_OPS_SIZE_V1 - 8,
#else
    .size = sizeof(struct tw_transport_ops),
#endif
    .version = TW_TRANSPORT_OPS_VERSION,
    .name = "rdma",
    .description = "loader test plugin",
#ifdef VARIANT_HALF_CLOSE_NO_SHUTDOWN
    .caps = TW_CAP_HALF_CLOSE,
#endif
#ifdef VARIANT_RMA_NO_POST
    .caps = TW_CAP_RMA,
    .rma_expose = t_rma_expose,
    .rma_revoke = t_rma_revoke,
#endif
    .init = t_init,
    .fini = t_fini,
    .loop_attach = t_loop_attach,
    .loop_detach = t_loop_detach,
    .listen = t_listen,
#ifndef VARIANT_NO_ACCEPT
    .accept = t_accept,
#endif
    .listener_close = t_listener_close,
    .connect = t_connect,
    .set_callback = t_set_callback,
    .set_events = t_set_events,
    .read = t_read,
    .readv = t_readv,
    .write = t_write,
    .writev = t_writev,
    .close = t_close,
    .get_error = t_get_error,
    .last_error = t_last_error,
#ifdef VARIANT_CHECKS_CONFIG
    .check_config = t_check_config,
#endif
};

static const struct tw_plugin_info t_info = {
#ifdef VARIANT_SMALL_INFO
    .size = TW_PLUGIN_INFO_SIZE_V1 - 8,
#else
    .size = sizeof(struct tw_plugin_info),
#endif
    .version = TW_PLUGIN_INFO_VERSION,
#ifdef VARIANT_INFO_ABI2
    .abi_major = TW_TEST_OTHER_MAJOR,
#else
    .abi_major = TW_ABI_MAJOR,
#endif
    .abi_minor = TW_ABI_MINOR,
    .name = "rdma",
    .plugin_version = "test",
    .ops = &t_ops,
};

#if defined(VARIANT_V2_SYMBOL)
#define OTHER_ENTRY TW_PASTE(twinwire_plugin_entry_v, TW_TEST_OTHER_MAJOR)
TW_EXPORT const struct tw_plugin_info *OTHER_ENTRY(uint32_t major, uint32_t minor);
TW_EXPORT const struct tw_plugin_info *OTHER_ENTRY(uint32_t major, uint32_t minor)
{
    (void)major;
    (void)minor;
    return &t_info;
}
#elif !defined(VARIANT_NO_ENTRY)
TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t major, uint32_t minor)
{
    (void)major;
    (void)minor;
#ifdef VARIANT_CRASH_IN_ENTRY
    raise(SIGSEGV);
#endif
    return &t_info;
}
#else
/* Something else exported, so the file is a valid library with symbols. */
TW_EXPORT int tw_test_not_a_plugin(void);
TW_EXPORT int tw_test_not_a_plugin(void) { return t_info.abi_major == 0; }
#endif
