/* SPDX-License-Identifier: MIT */
/*
 * A plugin from a later ABI 1.x: built against headers in which every
 * growable struct has one more trailing member (make_future_headers.py), so
 * its vtable and plugin info are larger than this host's.  It moves data
 * with the real TCP backend and, at each boundary, records what the host
 * handed it and whether the newer members were there, reading them only
 * behind TW_HAS_MEMBER.  Its private ctrl ops (namespace "future") report
 * that record and call host services on request.
 */
#include "future_plugin.h"

#include <tcp_ops.h>

#include <errno.h>
#include <string.h>

static const struct tw_host *g_host;
static struct future_observed g_seen;

static int f_init(const struct tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    g_host = host;
    g_seen.host_size = host->size;
    g_seen.host_has_future_service = TW_HAS_MEMBER(host, struct tw_host, future_service) && host->future_service;
    g_seen.host_has_vlog = TW_HAS_MEMBER(host, struct tw_host, vlog) && host->vlog;
    return tcp_init(host, out, why, why_len);
}

static int f_listen(tw_transport_loop *tl, const struct tw_listen_params *p, tw_listener **out)
{
    g_seen.listen_params_size = p->size;
    g_seen.listen_has_future_field = TW_HAS_MEMBER(p, struct tw_listen_params, future_field);
    return listener_open(tl, p, out);
}

static int f_connect(tw_transport_loop *tl, const struct tw_connect_params *p, tw_conn **out)
{
    g_seen.connect_params_size = p->size;
    g_seen.connect_has_future_field = TW_HAS_MEMBER(p, struct tw_connect_params, future_field);
    return conn_connect(tl, p, out);
}

static int f_send_buf_get(tw_conn *c, size_t min_len, struct tw_buf *out)
{
    g_seen.buf_size = out ? out->size : 0;
    g_seen.buf_has_future_field = out && TW_HAS_MEMBER(out, struct tw_buf, future_field);
    return conn_send_buf_get(c, min_len, out);
}

static void set_flag(void *arg) { *(int *)arg = 1; }

static int f_ctrl(tw_transport *t, tw_conn *c, const char *ns, uint32_t op, void *data, size_t len)
{
    if (!ns) return tcp_ctrl(t, c, ns, op, data, len);
    if (strcmp(ns, FUTURE_NAME) != 0) return -EOPNOTSUPP;
    switch (op) {
    case FUTURE_CTRL_OBSERVED:
        if (!data || len < sizeof g_seen) return -EINVAL;
        memcpy(data, &g_seen, sizeof g_seen);
        return 0;
    case FUTURE_CTRL_CONFIG_GET: {
        struct future_config_get *q = data;
        if (!q || len < sizeof *q || !g_host) return -EINVAL;
        q->value = g_host->config_get(g_host, q->key, &q->origin);
        return 0;
    }
    case FUTURE_CTRL_RUN_IN_LOOP: {
        struct future_run_in_loop *q = data;
        if (!q || len < sizeof *q || !g_host) return -EINVAL;
        q->rc = g_host->run_in_loop(q->loop, set_flag, q->ran);
        return 0;
    }
    default:
        return -EOPNOTSUPP;
    }
}

static int f_future_op(tw_transport *t, uint64_t arg)
{
    (void)t;
    return (int)arg;
}

static struct tw_transport_ops f_ops;
static struct tw_plugin_info f_info;

TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t major, uint32_t minor)
{
    (void)minor; /* an older minor is fine: it gets no future members */
    if (major != TW_ABI_MAJOR) return NULL;
    /* The TCP backend's vtable as far as its own build knows it, then the
     * members this plugin sets itself, the one from the future included. */
    memcpy(&f_ops, &tw_tcp_ops, tw_tcp_ops.size);
    f_ops.size = sizeof(struct tw_transport_ops);
    f_ops.version = TW_TRANSPORT_OPS_VERSION;
    f_ops.name = FUTURE_NAME;
    f_ops.description = "a plugin built against a later ABI 1.x header, moving data over TCP";
    f_ops.init = f_init;
    f_ops.listen = f_listen;
    f_ops.connect = f_connect;
    f_ops.send_buf_get = f_send_buf_get;
    f_ops.ctrl = f_ctrl;
    f_ops.future_op = f_future_op;
    f_info = (struct tw_plugin_info){
        .size = sizeof(struct tw_plugin_info),
        .version = TW_PLUGIN_INFO_VERSION,
        .abi_major = TW_ABI_MAJOR,
        .abi_minor = TW_ABI_MINOR,
        .name = FUTURE_NAME,
        .plugin_version = "future",
        .ops = &f_ops,
        .future_field = "from the future",
    };
    return &f_info;
}
