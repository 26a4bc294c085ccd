// SPDX-License-Identifier: MIT
// The host-side definitions of the handles plugins see as opaque
// (tw_loop, tw_watch, tw_timer), and the host services table.
#pragma once

#include <twinwire/host.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct event;

namespace twinwire {
class Config;
class Loop;
class PluginLibrary;
} // namespace twinwire

struct tw_loop {
    twinwire::Loop *loop;
};

struct tw_watch {
    struct event *ev;
    twinwire::Loop *loop;
    int fd;
    uint32_t events;
    tw_watch_cb cb;
    void *arg;
};

struct tw_timer {
    struct event *ev;
    twinwire::Loop *loop;
    uint64_t period_ns;
    tw_timer_cb cb;
    void *arg;
};

namespace twinwire {

/// The tw_host table given to one transport, with what it needs behind it:
/// the transport's name (the log source and config prefix), the config, and
/// the keys the transport looked up (the rest under its prefix are unknown).
struct HostServices {
    tw_host table;
    std::string name;
    const Config *config;
    std::mutex mutex;
    std::vector<std::string> looked_up;
    /// Transports handed out by the transport_ops service: kept (and their
    /// tables valid) until this table goes, after the plugin's fini.
    std::vector<std::unique_ptr<PluginLibrary>> inner_libraries;
    std::vector<std::unique_ptr<tw_transport_ops>> inner_builtin;

    /// `table_size` 0: the whole table; otherwise the table cut to that
    /// many bytes, as an older host would hand it out (below
    /// TW_HOST_SIZE_V1 only to see a plugin refuse it; below the 8-byte
    /// header or above sizeof: std::invalid_argument).
    HostServices(std::string transport_name, const Config &cfg, uint32_t table_size = 0);
    ~HostServices();
    std::vector<std::string> keys_looked_up();
};

} // namespace twinwire
