// SPDX-License-Identifier: MIT
// One runtime serving itself over any transport, throwing from each kind of
// application callback in turn (accept, connect, on_data, on_drain, on_eof,
// on_close, a timer, a posted task, a signal handler), then echoing once more: the unit suite
// runs it over TCP, tests/rdma over RDMA in the guest (issue 12 item 3).
#pragma once

#include <twinwire/runtime.hpp>

#include <csignal>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace callback_exceptions {

using namespace twinwire;

/// The kinds, in the order they are tried; "echo" last, throwing nothing.
inline const std::vector<std::string> &kinds()
{
    static const std::vector<std::string> k{"accept", "connect", "data", "drain",  "eof",
                                            "close",  "timer",   "task", "signal", "echo"};
    return k;
}

struct Report {
    std::map<std::string, CloseInfo> server_ends; ///< per kind, as the server's on_close saw it
    std::map<std::string, CloseInfo> client_ends;
    std::string echoed;        ///< what the last ("echo") connection got back
    std::string stuck_at;      ///< the kind the run stopped at when the watchdog fired
    std::string connect_error; ///< a connect that failed
};

/// Runs every kind against a listener on `listen_ip`; the client binds
/// `client_ip` when not empty (RDMA: the device to use).  `drain_bytes`:
/// what the drain kind writes, more than the transport takes at once (TCP
/// over loopback takes megabytes; RDMA its send ring, 64 KiB by default).
inline Report run(Config config, const std::string &listen_ip, const std::string &client_ip, int watchdog_s,
                  size_t drain_bytes)
{
    struct State {
        Runtime *rt = nullptr;
        uint16_t port = 0;
        size_t step = 0;
        bool step_started = false;
        bool signal_handled = false;
        std::unique_ptr<Timer> throwing_timer;
        Report report;
        const std::string &kind() const { return kinds()[step]; }
    };
    auto st = std::make_shared<State>();
    Runtime rt(std::move(config));
    rt.start();
    st->rt = &rt;
    rt.on_signal(SIGUSR2, [st] {
        st->signal_handled = true;
        throw std::runtime_error("a signal handler threw on purpose");
    });
    ListenOptions lo;
    lo.address = listen_ip;
    lo.port = 0;
    auto listener = rt.listen(lo, [st, drain_bytes](const ConnectionPtr &c) {
        const std::string kind = st->kind();
        c->on_close([st, kind](Connection &, const CloseInfo &info) {
            st->report.server_ends[kind] = info;
            if (kind == "close") throw std::runtime_error("on_close threw on purpose");
        });
        if (kind == "accept") throw std::runtime_error("the accept handler threw on purpose");
        c->on_data([kind, drain_bytes](Connection &conn, Buffer &in) {
            if (kind == "data") throw std::runtime_error("on_data threw on purpose");
            if (kind == "eof") {
                in.clear();
                conn.on_eof([](Connection &) { throw std::runtime_error("on_eof threw on purpose"); });
                return;
            }
            if (kind == "drain") {
                in.clear();
                conn.on_drain([](Connection &) { throw std::runtime_error("on_drain threw on purpose"); });
                conn.write(std::string(drain_bytes, 'd')); // it queues: on_drain runs once it has gone
                return;
            }
            conn.write(in);
        });
    });
    st->port = listener->port();

    // Starts the current kind's client; the poller below moves on when both
    // ends of it have closed (timer and task: at once).
    auto start_step = [st, listen_ip, client_ip]() {
        const std::string kind = st->kind();
        st->step_started = true;
        if (kind == "timer") {
            st->throwing_timer =
                std::make_unique<Timer>(st->rt->loop(0), [] { throw std::runtime_error("a timer threw on purpose"); });
            st->throwing_timer->start(std::chrono::milliseconds(1));
            return;
        }
        if (kind == "task") {
            (void)st->rt->loop(0).post([] { throw std::runtime_error("a posted task threw on purpose"); });
            return;
        }
        if (kind == "signal") {
            raise(SIGUSR2);
            return;
        }
        ConnectOptions co{listen_ip, st->port};
        co.source_address = client_ip;
        st->rt->connect(co, [st, kind](const ConnectionPtr &c, const ConnectError &error) {
            if (!c) {
                st->report.connect_error = error.message;
                st->rt->stop(false);
                return;
            }
            c->on_close([st, kind](Connection &, const CloseInfo &info) { st->report.client_ends[kind] = info; });
            if (kind == "connect") throw std::runtime_error("the connect handler threw on purpose");
            c->on_data([st, kind](Connection &conn, Buffer &in) {
                std::string got = in.take(in.size());
                if (kind == "echo") {
                    st->report.echoed += got;
                    if (st->report.echoed.size() >= 4) conn.close();
                }
            });
            c->write(kind);
            if (kind == "eof") c->shutdown_write();
            if (kind == "close") c->close();
        });
    };
    auto step_done = [st]() {
        const std::string &kind = st->kind();
        if (kind == "timer") return st->throwing_timer && !st->throwing_timer->active();
        if (kind == "task") return true;
        if (kind == "signal") return st->signal_handled;
        return st->report.server_ends.count(kind) && st->report.client_ends.count(kind);
    };
    Timer poller(rt.loop(0), [&] {
        if (!st->step_started) {
            start_step();
            return;
        }
        if (!step_done()) return;
        if (++st->step == kinds().size()) {
            --st->step;
            rt.stop(true);
            return;
        }
        st->step_started = false;
    });
    poller.start(std::chrono::milliseconds(1), std::chrono::milliseconds(5));
    bool watchdog_fired = false;
    Timer watchdog(rt.loop(0), [&] {
        watchdog_fired = true;
        rt.stop(false);
    });
    watchdog.start(std::chrono::seconds(watchdog_s));
    rt.run();
    if (watchdog_fired) st->report.stuck_at = st->kind();
    st->throwing_timer.reset();
    return st->report;
}

} // namespace callback_exceptions
