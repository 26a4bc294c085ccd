// SPDX-License-Identifier: MIT
// Runtime lifecycle: start, run, stop, signals.
#include "connection_access.hpp"
#include "resolver.hpp"
#include "run_guarded.hpp"
#include "runtime_impl.hpp"

#include <twinwire/log.hpp>

#include <event2/event.h>

#include <csignal>
#include <cerrno>
#include <cstring>
#include <future>
#include <unistd.h>

namespace twinwire {

LoopState::~LoopState() = default;

Runtime::Runtime(Config config) : impl_(std::make_unique<Impl>(this, std::move(config))) {}

Runtime::~Runtime()
{
    if (!impl_->started || impl_->torn_down) return;
    // start() without run(), or run() never reached its end: stop everything now.
    impl_->stopping = true;
    for (auto &l : impl_->loops) l->stop();
    for (auto &w : impl_->workers)
        if (w.joinable()) w.join();
    impl_->close_listeners();
    impl_->teardown_loop(0);
}

const std::string &Runtime::transport_name() const { return impl_->selection.chosen; }
const std::string &Runtime::transport_reason() const { return impl_->selection.reason; }

Transport *Runtime::transport(const std::string &name) const { return impl_->selection.find(name); }
const Config &Runtime::config() const { return impl_->config; }
const TransportSelection &Runtime::selection() const { return impl_->selection; }
size_t Runtime::loop_count() const { return impl_->loops.size(); }
Loop &Runtime::loop(size_t index) { return *impl_->loops.at(index); }

void Runtime::start()
{
    if (impl_->started) throw StartupError(errc::not_started, "Runtime::start() called twice");
    log::set_level(parse_log_level(impl_->config.log_level()));
    if (!impl_->config.log_file().empty()) log::set_file(impl_->config.log_file());
    if (!impl_->config.log_ident().empty()) log::set_ident(impl_->config.log_ident());
    impl_->config.check_connection_settings();
    if (impl_->config.get_bool("socket_activation")) impl_->passed = take_passed_sockets();
    try {
        impl_->selection = select_transports(impl_->config);
    } catch (const ConfigError &) {
        throw;
    } catch (const std::exception &e) {
        throw StartupError(errc::transport_unavailable, e.what());
    }
    const unsigned n = impl_->config.threads();
    for (unsigned i = 0; i < n; ++i) {
        impl_->loops.push_back(std::make_unique<Loop>(i));
        impl_->states.push_back(std::make_unique<LoopState>());
    }
    impl_->loops[0]->bind_to_current_thread();
    impl_->open_by_transport[impl_->selection.tcp->name()];
    for (auto &p : impl_->selection.plugins) impl_->open_by_transport[p->name()];
    if (std::string path = impl_->config.get("status_socket"); !path.empty())
        impl_->status_socket = std::make_unique<StatusSocket>(*impl_->loops[0], path,
                                                              [impl = impl_.get()] { return impl->status_text(); });
    auto attach_all = [this](Loop &loop) {
        impl_->selection.tcp->attach(loop);
        for (auto &p : impl_->selection.plugins) p->attach(loop);
    };
    attach_all(*impl_->loops[0]);
    impl_->started = true;

    std::vector<std::future<void>> ready;
    for (unsigned i = 1; i < n; ++i) {
        auto promise = std::make_shared<std::promise<void>>();
        ready.push_back(promise->get_future());
        impl_->workers.emplace_back([this, i, promise, attach_all] {
            Loop &loop = *impl_->loops[i];
            loop.bind_to_current_thread();
            try {
                attach_all(loop);
            } catch (...) {
                promise->set_exception(std::current_exception());
                impl_->teardown_loop(i);
                return;
            }
            promise->set_value();
            loop.run();
            impl_->teardown_loop(i);
        });
    }
    for (auto &f : ready) {
        try {
            f.get();
        } catch (const std::exception &e) {
            impl_->stopping = true;
            for (auto &l : impl_->loops) l->stop();
            for (auto &w : impl_->workers) w.join();
            impl_->workers.clear();
            impl_->teardown_loop(0);
            throw StartupError(errc::transport_unavailable, e.what());
        }
    }
    TW_DEBUG("runtime", "started %u loop(s), transport %s", n, impl_->selection.chosen.c_str());
}

void Runtime::run()
{
    if (!impl_->started) throw StartupError(errc::not_started, "Runtime::run() before start()");
    impl_->loops[0]->run();
    for (auto &w : impl_->workers)
        if (w.joinable()) w.join();
    impl_->close_listeners();
    impl_->teardown_loop(0);
}

void Runtime::stop(bool drain)
{
    if (!impl_->started || impl_->stopping.exchange(true)) return;
    Loop &main = *impl_->loops[0];
    if (main.in_loop_thread()) impl_->begin_stop(drain);
    else if (!main.post([this, drain] { impl_->begin_stop(drain); })) main.stop();
}

void Runtime::Impl::begin_stop(bool drain)
{
    TW_INFO("runtime", "stopping%s", drain ? ": letting connections flush" : "");
    close_listeners();
    for (size_t i = 0; i < loops.size(); ++i) {
        if (i == 0) close_connections(0, drain);
        else loops[i]->post([this, i, drain] { close_connections(i, drain); });
    }
    uint64_t grace = drain ? uint64_t(config.shutdown_timeout_ms()) * 1000000ull : 0;
    stop_deadline_ns = monotonic_ns() + grace;
    stop_timer = std::make_unique<Timer>(*loops[0], [this] {
        bool late = monotonic_ns() >= stop_deadline_ns;
        if (rt->connection_count() != 0 && !late) return;
        if (late && rt->connection_count() != 0)
            TW_WARN("runtime", "%zu connection(s) still open after shutdown_timeout_ms: closing them",
                    rt->connection_count());
        stop_timer->stop();
        for (auto &l : loops) l->stop();
    });
    stop_timer->start(std::chrono::milliseconds(0), std::chrono::milliseconds(10));
}

void Runtime::Impl::close_connections(size_t index, bool drain)
{
    std::vector<ConnectionPtr> open;
    for (auto &entry : states[index]->conns)
        if (auto c = entry.second.lock()) open.push_back(c);
    for (auto &c : open) drain ? c->close() : c->abort();
}

void Runtime::Impl::teardown_loop(size_t index)
{
    if (index == 0) torn_down = true;
    Loop &loop = *loops[index];
    if (index == 0) {
        stop_timer.reset();
        status_socket.reset();
        for (auto *ev : signal_events) event_free(ev);
        signal_events.clear();
    }
    loop.shutdown(); // runs what is still queued (accepted connections, plugin tasks), then refuses more
    states[index]->resolver.reset(); // connects still resolving end with an error
    close_connections(index, false);
    for (auto &p : selection.plugins) p->detach(loop);
    if (selection.tcp) selection.tcp->detach(loop);
}

size_t Runtime::connection_count() const
{
    size_t n = 0;
    for (const auto &s : impl_->states) n += s->count.load(std::memory_order_relaxed);
    return n;
}

std::vector<TransportStatus> Runtime::status() const
{
    std::vector<TransportStatus> out;
    if (!impl_->started) return out;
    auto add = [&](const Transport &t) {
        TransportStatus st;
        st.name = t.name();
        auto n = impl_->open_by_transport.find(st.name);
        if (n != impl_->open_by_transport.end()) st.connections = n->second.load(std::memory_order_relaxed);
        out.push_back(std::move(st));
    };
    // In order of preference, then the rest that loaded.
    for (const Transport *t : impl_->selection.in_use) add(*t);
    auto listed = [&](const std::string &name) {
        for (const auto &st : out)
            if (st.name == name) return true;
        return false;
    };
    if (!listed(impl_->selection.tcp->name())) add(*impl_->selection.tcp);
    for (const auto &p : impl_->selection.plugins)
        if (!listed(p->name())) add(*p);
    std::lock_guard<std::mutex> lock(impl_->listeners_mutex);
    for (const auto &weak : impl_->listeners) {
        auto l = weak.lock();
        if (!l || l->closed) continue;
        for (const auto &ep : l->endpoints)
            for (auto &st : out)
                if (st.name == ep->transport->name())
                    // As the "listening on" line writes it.
                    st.listening.push_back(ep->port == 0 ? l->address : l->address + ":" + std::to_string(ep->port));
    }
    return out;
}

// One line each, words then key=value: easy for a person, a script and
// twinwire-info alike.  "twinwire-status 1" names the format's version.
std::string Runtime::Impl::status_text() const
{
    std::string text = "twinwire-status 1\npid " + std::to_string(getpid()) + "\nprogram " +
                       program_invocation_short_name + "\nconnections " + std::to_string(rt->connection_count()) + "\n";
    for (const TransportStatus &st : rt->status()) {
        text += "transport " + st.name + " connections=" + std::to_string(st.connections) + " listening=";
        for (size_t i = 0; i < st.listening.size(); ++i) text += (i ? "," : "") + st.listening[i];
        text += "\n";
    }
    return text;
}

Loop &Runtime::Impl::next_loop(std::atomic<unsigned> &turn)
{
    unsigned i = turn.fetch_add(1, std::memory_order_relaxed);
    return *loops[i % loops.size()];
}

void Runtime::Impl::track(Loop &loop, const ConnectionPtr &c)
{
    LoopState &state = *states[loop.index()];
    state.conns.emplace(c->id(), c);
    state.count.fetch_add(1, std::memory_order_relaxed);
    auto of_transport = open_by_transport.find(c->transport_name());
    std::atomic<size_t> *per_transport = of_transport == open_by_transport.end() ? nullptr : &of_transport->second;
    if (per_transport) per_transport->fetch_add(1, std::memory_order_relaxed);
    ConnectionAccess::set_on_finished(*c, [&state, per_transport](Connection &done) {
        state.conns.erase(done.id());
        state.count.fetch_sub(1, std::memory_order_relaxed);
        if (per_transport) per_transport->fetch_sub(1, std::memory_order_relaxed);
    });
}

namespace {

void on_signal_event(evutil_socket_t, short, void *arg)
{
    run_guarded("signal handler", 0, *static_cast<std::function<void()> *>(arg));
}

} // namespace

void Runtime::on_signal(int signal, std::function<void()> handler)
{
    if (!impl_->started) throw StartupError(errc::not_started, "Runtime::on_signal() before start()");
    auto fn = std::make_unique<std::function<void()>>(std::move(handler));
    struct event *ev = evsignal_new(impl_->loops[0]->base(), signal, on_signal_event, fn.get());
    if (!ev || event_add(ev, nullptr) != 0)
        throw StartupError(errc::transport_error, std::string("cannot handle signal ") + strsignal(signal));
    impl_->signal_events.push_back(ev);
    impl_->signal_handlers.push_back(std::move(fn));
}

void Runtime::stop_on_signals(const std::vector<int> &signals)
{
    for (int sig : signals)
        on_signal(sig, [this, sig] {
            TW_INFO("runtime", "received %s", strsignal(sig));
            stop(true);
        });
}

} // namespace twinwire
