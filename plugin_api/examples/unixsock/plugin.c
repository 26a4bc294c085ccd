/* SPDX-License-Identifier: MIT */
/* The transport: its settings, per-loop state, the ops table and the one
 * exported symbol. */
#define _POSIX_C_SOURCE 200809L /* -std=c99 hides POSIX without it */

#include "unixsock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define US_DIR_KEY US_NAME ".dir"
/* The longest file name inside the directory: "255.255.255.255-65535". */
#define US_LONGEST_NAME 22

/* unixsock.dir: where the socket files live (default /tmp/twinwire-unixsock-UID).
 * Returns 0, or -TW_ECONFIG with the reason in why. */
static int read_dir(const struct tw_host *host, char *dir, size_t len, char *why, size_t why_len)
{
    const char *origin = NULL;
    const char *value = host->config_get(host, US_DIR_KEY, &origin);
    char fallback[64];
    if (!value) {
        snprintf(fallback, sizeof fallback, "/tmp/twinwire-unixsock-%u", (unsigned)getuid());
        value = fallback;
        origin = "default";
    }
    if (value[0] != '/' || strlen(value) + US_LONGEST_NAME >= len) {
        snprintf(why, why_len, "%s = '%s' (%s): want an absolute directory of at most %u characters", US_DIR_KEY, value,
                 origin ? origin : "?", (unsigned)(len - US_LONGEST_NAME - 1));
        return -TW_ECONFIG;
    }
    snprintf(dir, len, "%s", value);
    return 0;
}

static int us_check_config(const struct tw_host *host, char *why, size_t why_len)
{
    char dir[sizeof(((struct tw_transport *)0)->dir)];
    return read_dir(host, dir, sizeof dir, why, why_len);
}

static int us_init(const struct tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    struct stat st;
    tw_transport *t;
    int rc;
    /* Growth rules (abi.h): any host table from the ABI 1.0 size up. */
    if (host->size < TW_HOST_SIZE_V1) {
        snprintf(why, why_len, "the host's table is %u bytes, smaller than the %u of ABI 1.0", (unsigned)host->size,
                 (unsigned)TW_HOST_SIZE_V1);
        return -TW_EABI;
    }
    if (!(t = calloc(1, sizeof *t))) return -ENOMEM;
    t->host = host;
    rc = read_dir(host, t->dir, sizeof t->dir, why, why_len);
    if (rc == 0 && mkdir(t->dir, 0700) < 0 && errno != EEXIST) rc = -errno;
    /* Not a symlink, and ours: in a shared /tmp someone else could have made it first. */
    if (rc == 0 && lstat(t->dir, &st) < 0) rc = -errno;
    if (rc == 0 && !S_ISDIR(st.st_mode)) rc = -ENOTDIR;
    if (rc == 0 && st.st_uid != getuid()) rc = -EPERM;
    if (rc < 0) {
        if (rc != -TW_ECONFIG)
            snprintf(why, why_len, "cannot use %s as the socket directory: %s (set %s)", t->dir, strerror(-rc),
                     US_DIR_KEY);
        free(t);
        return rc;
    }
    host->log(host, TW_LOG_DEBUG, "socket files in %s", t->dir);
    *out = t;
    return 0;
}

static void us_fini(tw_transport *t) { free(t); }

static int us_describe(tw_transport *t, char *buf, size_t len) { return snprintf(buf, len, "dir: %s\n", t->dir); }

static int us_loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out)
{
    tw_transport_loop *tl = calloc(1, sizeof *tl);
    if (!tl) return -ENOMEM;
    tl->transport = t;
    tl->loop = loop;
    *out = tl;
    return 0;
}

static void us_loop_detach(tw_transport_loop *tl) { free(tl); }

static const struct tw_transport_ops us_ops = {
    .size = sizeof(struct tw_transport_ops),
    .version = TW_TRANSPORT_OPS_VERSION,
    .name = US_NAME,
    .description = "example: AF_UNIX stream sockets on one host, IPv4 addresses mapped to socket files",
    .caps = TW_CAP_HALF_CLOSE | TW_CAP_PENDING_DATA,
    .init = us_init,
    .fini = us_fini,
    .describe = us_describe,
    .loop_attach = us_loop_attach,
    .loop_detach = us_loop_detach,
    .has_pending_data = us_has_pending_data,
    .process_pending_data = us_process_pending_data,
    .listen = us_listen,
    .accept = us_accept,
    .listener_addr = us_listener_addr,
    .listener_close = us_listener_close,
    .connect = us_conn_connect,
    .set_callback = us_set_callback,
    .set_events = us_set_events,
    .read = us_read,
    .readv = us_readv,
    .write = us_write,
    .writev = us_writev,
    .shutdown = us_shutdown,
    .close = us_close,
    .get_error = us_get_error,
    .last_error = us_last_error,
    .check_config = us_check_config,
};

static const struct tw_plugin_info us_info = {
    .size = sizeof(struct tw_plugin_info),
    .version = TW_PLUGIN_INFO_VERSION,
    .abi_major = TW_ABI_MAJOR,
    .abi_minor = TW_ABI_MINOR,
    .name = US_NAME,
    .plugin_version = "1.0",
    .ops = &us_ops,
};

TW_EXPORT const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor; /* any minor: members past the host's size are never read by it */
    return host_abi_major == TW_ABI_MAJOR ? &us_info : NULL;
}
