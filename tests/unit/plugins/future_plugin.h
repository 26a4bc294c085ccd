/* SPDX-License-Identifier: MIT */
/* The private ctrl ops of future_plugin.c (namespace "future"), shared with
 * the growth tests.  Plain C99 on the ABI 1.0 part of the headers. */
#ifndef TW_TEST_FUTURE_PLUGIN_H
#define TW_TEST_FUTURE_PLUGIN_H

#include <twinwire/plugin.h>

#define FUTURE_NAME "future"

/* What the plugin saw of the host's tables (FUTURE_CTRL_OBSERVED). */
struct future_observed {
    uint32_t host_size;
    uint32_t host_has_future_service;
    uint32_t host_has_vlog;
    uint32_t listen_params_size;
    uint32_t listen_has_future_field;
    uint32_t connect_params_size;
    uint32_t connect_has_future_field;
    uint32_t buf_size;
    uint32_t buf_has_future_field;
};

/* FUTURE_CTRL_CONFIG_GET: the plugin calls host->config_get(key). */
struct future_config_get {
    const char *key;
    const char *value;
    const char *origin;
};

/* FUTURE_CTRL_RUN_IN_LOOP: the plugin posts a task that sets *ran to 1. */
struct future_run_in_loop {
    tw_loop *loop;
    int *ran;
    int rc; /* what run_in_loop returned */
};

enum future_ctrl_op {
    FUTURE_CTRL_OBSERVED = 1,   /* data: struct future_observed * */
    FUTURE_CTRL_CONFIG_GET = 2, /* data: struct future_config_get * */
    FUTURE_CTRL_RUN_IN_LOOP = 3 /* data: struct future_run_in_loop * */
};

#endif
