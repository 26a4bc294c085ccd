// SPDX-License-Identifier: MIT
#include "fake_wire.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace twfuzz {

void broken(const char *what)
{
    fprintf(stderr, "fuzz-tls: %s\n", what);
    abort();
}

namespace {

// A timer knows its host: timer_arm and timer_del get only the timer.
struct TimerOf {
    FakeHost *host;
    void *timer;
};

Wire *wire(tw_conn *c) { return reinterpret_cast<Wire *>(c); }
FakeHost *host_of_loop(tw_loop *l) { return reinterpret_cast<FakeHost *>(l); }

void format_line(const char *fmt, va_list ap)
{
    char line[2048]; // formatting every line checks the plugin's arguments under ASan
    vsnprintf(line, sizeof line, fmt, ap);
}

int fill_addr(sockaddr *addr, uint32_t *len, uint16_t port)
{
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (!addr || !len || *len < sizeof in) return -EINVAL;
    memcpy(addr, &in, sizeof in);
    *len = sizeof in;
    return 0;
}

} // namespace

// The host services, as static members with access to FakeHost.
struct HostServices {
    static void log(const tw_host *, int, const char *fmt, ...)
    {
        va_list ap;
        va_start(ap, fmt);
        format_line(fmt, ap);
        va_end(ap);
    }
    static void vlog(const tw_host *, int, const char *fmt, va_list ap) { format_line(fmt, ap); }
    static const char *config_get(const tw_host *h, const char *key, const char **origin)
    {
        if (origin) *origin = "fuzz-tls";
        auto &s = FakeHost::self(h)->settings_;
        auto it = s.find(key);
        return it == s.end() ? nullptr : it->second.c_str();
    }
    static uint64_t now_ns(const tw_host *h) { return FakeHost::self(h)->now; }
    static int timer_add(tw_loop *loop, tw_timer_cb cb, void *arg, tw_timer **out)
    {
        auto *t = new FakeHost::Timer{cb, arg};
        host_of_loop(loop)->timers_.push_back(t);
        *out = reinterpret_cast<tw_timer *>(new TimerOf{host_of_loop(loop), t});
        return 0;
    }
    static FakeHost::Timer *timer(tw_timer *t)
    {
        return static_cast<FakeHost::Timer *>(reinterpret_cast<TimerOf *>(t)->timer);
    }
    static int timer_arm(tw_timer *t, uint64_t delay, uint64_t period)
    {
        expect(period == 0, "the plugin armed a periodic timer");
        timer(t)->due = reinterpret_cast<TimerOf *>(t)->host->now + std::max<uint64_t>(delay, 1);
        return 0;
    }
    static void timer_disarm(tw_timer *t) { timer(t)->due = 0; }
    static void timer_del(tw_timer *t)
    {
        auto *of = reinterpret_cast<TimerOf *>(t);
        auto &all = of->host->timers_;
        auto *inner = timer(t);
        all.erase(std::remove(all.begin(), all.end(), inner), all.end());
        delete inner;
        delete of;
    }
    static int run_in_loop(tw_loop *loop, tw_task_fn fn, void *arg)
    {
        host_of_loop(loop)->tasks_.push_back({fn, arg});
        return 0;
    }
    static int transport_ops(const tw_host *, const char *name, const tw_transport_ops **out, char *why, size_t len)
    {
        if (strcmp(name, "tcp") != 0) {
            snprintf(why, len, "fuzz-tls offers only tcp");
            return -ENOENT;
        }
        *out = inner_ops();
        return 0;
    }
};

FakeHost::FakeHost(std::map<std::string, std::string> settings) : settings_(std::move(settings))
{
    table_.size = sizeof table_;
    table_.version = TW_HOST_VERSION;
    table_.host_data = this;
    table_.log = HostServices::log;
    table_.vlog = HostServices::vlog;
    table_.log_enabled = [](const tw_host *, int) { return 1; }; // the debug lines run too
    table_.config_get = HostServices::config_get;
    table_.now_ns = HostServices::now_ns;
    table_.timer_add = HostServices::timer_add;
    table_.timer_arm = HostServices::timer_arm;
    table_.timer_disarm = HostServices::timer_disarm;
    table_.timer_del = HostServices::timer_del;
    table_.run_in_loop = HostServices::run_in_loop;
    table_.loop_index = [](const tw_loop *) -> unsigned { return 0; };
    table_.in_loop_thread = [](const tw_loop *) { return 1; };
    table_.transport_ops = HostServices::transport_ops;
}

Wire *FakeHost::open_wire()
{
    wires_.push_back(new Wire{});
    return wires_.back();
}

void FakeHost::notify(Wire *w, uint32_t events)
{
    if (!w->closed && w->cb) w->cb(reinterpret_cast<tw_conn *>(w), events, w->arg);
}

void FakeHost::run_tasks()
{
    for (int round = 0; round < 16 && !tasks_.empty(); ++round) {
        std::vector<Task> now_due;
        now_due.swap(tasks_);
        for (const Task &t : now_due) t.fn(t.arg);
    }
}

void FakeHost::advance(uint64_t ns)
{
    now += ns;
    // A callback may add, arm or delete timers (itself included): look again after each.
    for (int fired = 0; fired < 64; ++fired) {
        auto due = std::find_if(timers_.begin(), timers_.end(), [&](Timer *t) { return t->due && t->due <= now; });
        if (due == timers_.end()) return;
        Timer *t = *due;
        t->due = 0;
        t->cb(nullptr, t->arg);
    }
}

bool FakeHost::wire_alive(const Wire *w) const { return !w->closed; }

void FakeHost::reset()
{
    for (Wire *w : wires_) {
        expect(w->closed, "an inner connection was never closed");
        delete w;
    }
    wires_.clear();
    expect(tasks_.empty(), "a task was left for a loop that ran none");
    expect(timers_.empty(), "a timer outlived every connection");
}

// The inner transport: one wire per connection, nothing else.
struct InnerOps {
    static int init(const tw_host *h, tw_transport **out, char *, size_t)
    {
        *out = reinterpret_cast<tw_transport *>(FakeHost::self(h));
        return 0;
    }
    static int loop_attach(tw_transport *t, tw_loop *, tw_transport_loop **out)
    {
        *out = reinterpret_cast<tw_transport_loop *>(t);
        return 0;
    }
    static int listen(tw_transport_loop *tl, const tw_listen_params *, tw_listener **out)
    {
        *out = reinterpret_cast<tw_listener *>(tl);
        return 0;
    }
    static int accept(tw_listener *l, tw_transport_loop *, tw_conn **out)
    {
        *out = reinterpret_cast<tw_conn *>(reinterpret_cast<FakeHost *>(l)->open_wire());
        return 0;
    }
    static int connect(tw_transport_loop *tl, const tw_connect_params *, tw_conn **out)
    {
        *out = reinterpret_cast<tw_conn *>(reinterpret_cast<FakeHost *>(tl)->open_wire());
        return 0;
    }
    static int set_callback(tw_conn *c, tw_conn_cb cb, void *arg)
    {
        expect(!wire(c)->closed, "set_callback on a closed inner connection");
        wire(c)->cb = cb;
        wire(c)->arg = arg;
        return 0;
    }
    static int set_events(tw_conn *c, uint32_t events)
    {
        expect(!wire(c)->closed, "set_events on a closed inner connection");
        wire(c)->events = events;
        return 0;
    }
    static ssize_t read(tw_conn *c, void *buf, size_t len)
    {
        Wire *w = wire(c);
        expect(!w->closed, "read from a closed inner connection");
        if (w->error) return w->error;
        if (w->to_plugin.empty()) return w->ended ? 0 : -EAGAIN;
        size_t n = std::min(len, w->to_plugin.size());
        memcpy(buf, w->to_plugin.data(), n);
        w->to_plugin.erase(0, n);
        return static_cast<ssize_t>(n);
    }
    static ssize_t write(tw_conn *c, const void *buf, size_t len)
    {
        Wire *w = wire(c);
        expect(!w->closed, "write to a closed inner connection");
        expect(!w->shut_wr, "write after the inner connection's SHUT_WR");
        if (w->error) return w->error;
        if (w->from_plugin.size() >= w->room) return -EAGAIN;
        size_t n = std::min(len, w->room - w->from_plugin.size());
        w->from_plugin.append(static_cast<const char *>(buf), n);
        return static_cast<ssize_t>(n);
    }
    static ssize_t readv(tw_conn *c, const iovec *iov, int n)
    {
        return n > 0 ? read(c, iov[0].iov_base, iov[0].iov_len) : 0;
    }
    static ssize_t writev(tw_conn *c, const iovec *iov, int n)
    {
        return n > 0 ? write(c, iov[0].iov_base, iov[0].iov_len) : 0;
    }
    static int shutdown(tw_conn *c, int how)
    {
        if (how != SHUT_RD) wire(c)->shut_wr = true;
        return 0;
    }
    static void close(tw_conn *c)
    {
        expect(!wire(c)->closed, "an inner connection closed twice");
        wire(c)->closed = true;
        wire(c)->cb = nullptr;
    }
    static int get_error(tw_conn *c) { return wire(c)->error; }
    static const char *last_error(tw_conn *c) { return wire(c)->error ? "Connection reset by peer (fuzz-tls)" : ""; }
};

const tw_transport_ops *inner_ops()
{
    static const tw_transport_ops ops = [] {
        tw_transport_ops o{};
        o.size = sizeof o;
        o.version = TW_TRANSPORT_OPS_VERSION;
        o.name = "tcp";
        o.description = "fuzz-tls's byte queues";
        o.caps = TW_CAP_HALF_CLOSE;
        o.init = InnerOps::init;
        o.fini = [](tw_transport *) {};
        o.probe = [](const tw_host *, char *buf, size_t len) { return snprintf(buf, len, "fake\n"); };
        o.describe = [](tw_transport *, char *buf, size_t len) { return snprintf(buf, len, "fake\n"); };
        o.loop_attach = InnerOps::loop_attach;
        o.loop_detach = [](tw_transport_loop *) {};
        o.has_pending_data = [](tw_transport_loop *) { return 0; };
        o.process_pending_data = [](tw_transport_loop *) { return 0; };
        o.listen = InnerOps::listen;
        o.accept = InnerOps::accept;
        o.listener_addr = [](tw_listener *, sockaddr *a, uint32_t *l) { return fill_addr(a, l, 6380); };
        o.listener_close = [](tw_listener *) {};
        o.connect = InnerOps::connect;
        o.set_callback = InnerOps::set_callback;
        o.set_events = InnerOps::set_events;
        o.read = InnerOps::read;
        o.readv = InnerOps::readv;
        o.write = InnerOps::write;
        o.writev = InnerOps::writev;
        o.shutdown = InnerOps::shutdown;
        o.close = InnerOps::close;
        o.get_error = InnerOps::get_error;
        o.last_error = InnerOps::last_error;
        o.local_addr = [](tw_conn *, sockaddr *a, uint32_t *l) { return fill_addr(a, l, 6380); };
        o.peer_addr = [](tw_conn *, sockaddr *a, uint32_t *l) { return fill_addr(a, l, 40312); };
        o.get_stats = [](tw_conn *, tw_conn_stats *) { return 0; };
        o.ctrl = [](tw_transport *, tw_conn *, const char *, uint32_t, void *, size_t) { return -EOPNOTSUPP; };
        o.check_config = [](const tw_host *, char *, size_t) { return 0; };
        return o;
    }();
    return &ops;
}

} // namespace twfuzz
