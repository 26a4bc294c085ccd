// SPDX-License-Identifier: MIT
// The tw_host table: what the framework offers a transport.  Plugin code is
// C: no C++ exception may unwind into it.  Every entry point and every
// callback the host runs for a plugin catches, logs and returns an error.
#include "host_objects.hpp"
#include "transport_keys.hpp"

#include <twinwire/config.hpp>
#include <twinwire/log.hpp>
#include <twinwire/loop.hpp>
#include <twinwire/transport.hpp>

#include <event2/event.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

namespace twinwire {
namespace {

HostServices *services(const tw_host *host) { return static_cast<HostServices *>(host->host_data); }

// Say that a host service failed instead of letting the exception reach C.
// Logging may itself fail (no memory): then the error code is all there is.
void report_exception(const char *source, const char *service) noexcept
{
    try {
        try {
            throw;
        } catch (const std::exception &e) {
            log::write(LogLevel::Error, source, "host service %s failed: %s", service, e.what());
        } catch (...) {
            log::write(LogLevel::Error, source, "host service %s failed: unknown exception", service);
        }
    } catch (...) {
    }
}

// Run a host service; an exception becomes `on_error` (and one log line).
template <class R, class Fn> R guarded(const char *source, const char *service, R on_error, Fn fn) noexcept
{
    try {
        return fn();
    } catch (...) {
        report_exception(source, service);
        return on_error;
    }
}

template <class Fn> void guarded_void(const char *source, const char *service, Fn fn) noexcept
{
    try {
        fn();
    } catch (...) {
        report_exception(source, service);
    }
}

LogLevel to_level(int level) { return static_cast<LogLevel>(std::clamp(level, 0, static_cast<int>(LogLevel::Trace))); }

void host_vlog(const tw_host *host, int level, const char *fmt, va_list ap)
{
    if (!host || !fmt || !log::enabled(to_level(level))) return;
    const char *source = services(host)->name.c_str();
    guarded_void(source, "log", [&] { log::vwrite(to_level(level), source, fmt, ap); });
}

void host_log(const tw_host *host, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    host_vlog(host, level, fmt, ap);
    va_end(ap);
}

int host_log_enabled(const tw_host *, int level) { return log::enabled(to_level(level)); }

const char *host_config_get(const tw_host *host, const char *key, const char **origin)
{
    if (origin) *origin = "unset";
    if (!host || !key) return nullptr;
    HostServices *s = services(host);
    return guarded(s->name.c_str(), "config_get", static_cast<const char *>(nullptr), [&]() -> const char * {
        {
            std::lock_guard<std::mutex> lock(s->mutex);
            if (std::find(s->looked_up.begin(), s->looked_up.end(), key) == s->looked_up.end())
                s->looked_up.emplace_back(key);
        }
        const ConfigValue *v = s->config->find(key);
        if (origin) *origin = v ? v->origin.c_str() : "unset";
        return v ? v->value.c_str() : nullptr;
    });
}

uint64_t host_now_ns(const tw_host *) { return monotonic_ns(); }

short to_libevent(uint32_t events)
{
    return static_cast<short>(((events & TW_WATCH_READ) ? EV_READ : 0) | ((events & TW_WATCH_WRITE) ? EV_WRITE : 0));
}

// libevent calls these from C; the plugin's callback is C.  Nothing here throws.
void on_watch(evutil_socket_t fd, short what, void *arg)
{
    tw_watch *w = static_cast<tw_watch *>(arg);
    uint32_t events =
        ((what & EV_READ) ? uint32_t(TW_WATCH_READ) : 0u) | ((what & EV_WRITE) ? uint32_t(TW_WATCH_WRITE) : 0u);
    w->cb(w, static_cast<int>(fd), events, w->arg);
}

int host_watch_set(tw_watch *w, uint32_t events);

int host_watch_add(tw_loop *loop, int fd, uint32_t events, tw_watch_cb cb, void *arg, tw_watch **out)
{
    if (!loop || fd < 0 || !cb || !out) return -EINVAL;
    tw_watch *w = new (std::nothrow) tw_watch{};
    if (!w) return -ENOMEM;
    w->loop = Loop::from_handle(loop);
    w->fd = fd;
    w->cb = cb;
    w->arg = arg;
    w->ev = event_new(w->loop->base(), fd, EV_PERSIST, on_watch, w);
    if (!w->ev) {
        delete w;
        return -ENOMEM;
    }
    int rc = host_watch_set(w, events);
    if (rc < 0) {
        event_free(w->ev);
        delete w;
        return rc;
    }
    *out = w;
    return 0;
}

int host_watch_set(tw_watch *w, uint32_t events)
{
    if (!w) return -EINVAL;
    if (events == w->events && (events == 0 || event_pending(w->ev, EV_READ | EV_WRITE, nullptr))) return 0;
    event_del(w->ev);
    w->events = events;
    if (events == 0) return 0;
    if (event_assign(w->ev, w->loop->base(), w->fd, static_cast<short>(to_libevent(events) | EV_PERSIST), on_watch,
                     w) != 0)
        return -EINVAL;
    return event_add(w->ev, nullptr) == 0 ? 0 : -ENOMEM;
}

void host_watch_del(tw_watch *w)
{
    if (!w) return;
    event_free(w->ev);
    delete w;
}

void on_timer(evutil_socket_t, short, void *arg)
{
    tw_timer *t = static_cast<tw_timer *>(arg);
    if (t->period_ns) {
        struct timeval tv = {static_cast<time_t>(t->period_ns / 1000000000ull),
                             static_cast<suseconds_t>((t->period_ns % 1000000000ull) / 1000)};
        evtimer_add(t->ev, &tv);
    }
    t->cb(t, t->arg);
}

int host_timer_add(tw_loop *loop, tw_timer_cb cb, void *arg, tw_timer **out)
{
    if (!loop || !cb || !out) return -EINVAL;
    tw_timer *t = new (std::nothrow) tw_timer{};
    if (!t) return -ENOMEM;
    t->loop = Loop::from_handle(loop);
    t->cb = cb;
    t->arg = arg;
    t->ev = evtimer_new(t->loop->base(), on_timer, t);
    if (!t->ev) {
        delete t;
        return -ENOMEM;
    }
    *out = t;
    return 0;
}

int host_timer_arm(tw_timer *t, uint64_t delay_ns, uint64_t period_ns)
{
    if (!t) return -EINVAL;
    t->period_ns = period_ns;
    struct timeval tv = {static_cast<time_t>(delay_ns / 1000000000ull),
                         static_cast<suseconds_t>((delay_ns % 1000000000ull) / 1000)};
    return evtimer_add(t->ev, &tv) == 0 ? 0 : -ENOMEM;
}

void host_timer_disarm(tw_timer *t)
{
    if (t) evtimer_del(t->ev);
}

void host_timer_del(tw_timer *t)
{
    if (!t) return;
    event_free(t->ev);
    delete t;
}

int host_run_in_loop(tw_loop *loop, tw_task_fn fn, void *arg)
{
    if (!loop || !fn) return -EINVAL;
    // A task that cannot be queued (no memory) is the caller's to keep: it
    // gets -ENOMEM, like -ESHUTDOWN, and fn never runs.
    return guarded("loop", "run_in_loop", -ENOMEM,
                   [&] { return Loop::from_handle(loop)->post([fn, arg] { fn(arg); }) ? 0 : -ESHUTDOWN; });
}

void set_why(char *why, size_t why_len, const std::string &text)
{
    if (why && why_len) snprintf(why, why_len, "%s", text.c_str());
}

// Another transport's table for a plugin that wraps it: the built-in TCP
// backend, or a plugin searched and checked like any other (never the caller).
int host_transport_ops(const tw_host *host, const char *name, const tw_transport_ops **out, char *why, size_t why_len)
{
    if (out) *out = nullptr;
    if (!host || !name || !*name || !out) {
        set_why(why, why_len, "transport_ops needs a transport name and somewhere to put its table");
        return -EINVAL;
    }
    HostServices *s = services(host);
    if (s->name == name) {
        set_why(why, why_len, "transport '" + s->name + "' cannot wrap itself");
        return -ELOOP;
    }
    return guarded(s->name.c_str(), "transport_ops", -ENOMEM, [&]() -> int {
        std::lock_guard<std::mutex> lock(s->mutex);
        if (std::string(name) == "tcp") {
            s->inner_builtin.push_back(std::make_unique<tw_transport_ops>(builtin_tcp_ops()));
            *out = s->inner_builtin.back().get();
            return 0;
        }
        PluginLoadReport report;
        std::unique_ptr<PluginLibrary> lib = PluginLibrary::open(name, *s->config, &report);
        if (!lib) {
            set_why(why, why_len, "transport '" + std::string(name) + "' cannot be loaded: " + report.reason);
            return -ENOENT;
        }
        *out = &lib->ops();
        s->inner_libraries.push_back(std::move(lib));
        return 0;
    });
}

unsigned host_loop_index(const tw_loop *loop) { return loop->loop->index(); }
int host_in_loop_thread(const tw_loop *loop) { return loop->loop->in_loop_thread() ? 1 : 0; }

} // namespace

HostServices::HostServices(std::string transport_name, const Config &cfg, uint32_t table_size)
    : table{}, name(std::move(transport_name)), config(&cfg)
{
    const uint32_t header = offsetof(tw_host, host_data);
    if (table_size && (table_size < header || table_size > sizeof(tw_host)))
        throw std::invalid_argument("a host table of " + std::to_string(table_size) + " bytes: it must be " +
                                    std::to_string(header) + ".." + std::to_string(sizeof(tw_host)));
    table.size = table_size ? table_size : sizeof(tw_host);
    table.version = TW_HOST_VERSION;
    table.host_data = this;
    table.log = host_log;
    table.log_enabled = host_log_enabled;
    table.config_get = host_config_get;
    table.now_ns = host_now_ns;
    table.watch_add = host_watch_add;
    table.watch_set = host_watch_set;
    table.watch_del = host_watch_del;
    table.timer_add = host_timer_add;
    table.timer_arm = host_timer_arm;
    table.timer_disarm = host_timer_disarm;
    table.timer_del = host_timer_del;
    table.run_in_loop = host_run_in_loop;
    table.loop_index = host_loop_index;
    table.in_loop_thread = host_in_loop_thread;
    table.vlog = host_vlog;
    table.transport_ops = host_transport_ops;
    // Members an older host would not have are not there: zero past the size.
    std::memset(reinterpret_cast<char *>(&table) + table.size, 0, sizeof table - table.size);
}

HostServices::~HostServices() = default;

std::vector<std::string> HostServices::keys_looked_up()
{
    std::lock_guard<std::mutex> lock(mutex);
    return looked_up;
}

} // namespace twinwire
