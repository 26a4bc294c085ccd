// SPDX-License-Identifier: MIT
// What the tls plugin runs on inside fuzz-tls: a host table (settings,
// a clock the program moves, timers, tasks run when the program says) and an
// inner transport whose one connection is a byte queue each way that the
// program fills, drains, ends and breaks.  No loop, no socket, no thread.
#pragma once

#include <twinwire/transport.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace twfuzz {

[[noreturn]] void broken(const char *what);
inline void expect(bool ok, const char *what)
{
    if (!ok) broken(what);
}

/// The inner transport's connection: what the plugin reads, what it wrote.
struct Wire {
    std::string to_plugin;   ///< bytes the peer sent, not read by the plugin yet
    std::string from_plugin; ///< bytes the plugin wrote, not taken by the peer yet
    size_t room = 1 << 20;   ///< what write accepts before it says -EAGAIN
    bool ended = false;      ///< read returns 0 once to_plugin is empty
    int error = 0;           ///< read and write return it (negative errno)
    bool closed = false;     ///< the plugin closed it
    bool shut_wr = false;    ///< the plugin shut its sending side
    uint32_t events = 0;     ///< what the plugin asked for
    tw_conn_cb cb = nullptr;
    void *arg = nullptr;
};

/// The host table and the inner transport, one per tls transport.
class FakeHost {
public:
    explicit FakeHost(std::map<std::string, std::string> settings);
    FakeHost(const FakeHost &) = delete;
    FakeHost &operator=(const FakeHost &) = delete;

    const tw_host *table() const { return &table_; }
    tw_loop *loop() { return reinterpret_cast<tw_loop *>(this); }

    /// A new inner connection, as the inner listener's accept or connect gives.
    Wire *open_wire();
    Wire *newest_wire() { return wires_.empty() ? nullptr : wires_.back(); }
    /// The inner connection's callback, when the plugin set one and has not
    /// closed it: `events` as the inner transport would report them.
    void notify(Wire *w, uint32_t events);
    void run_tasks();
    /// Move the clock on and fire the timers that are due.
    void advance(uint64_t ns);
    bool wire_alive(const Wire *w) const;
    /// Wires the plugin closed are freed here, at the end of an input.
    void reset();

    uint64_t now = 1'000'000'000;

private:
    struct Timer {
        tw_timer_cb cb;
        void *arg;
        uint64_t due = 0; ///< 0: disarmed
        bool deleted = false;
    };
    struct Task {
        tw_task_fn fn;
        void *arg;
    };
    static FakeHost *self(const tw_host *h) { return static_cast<FakeHost *>(h->host_data); }
    friend struct HostServices;
    friend struct InnerOps;

    tw_host table_{};
    std::map<std::string, std::string> settings_;
    std::vector<Timer *> timers_;
    std::vector<Task> tasks_;
    std::vector<Wire *> wires_;
};

/// The inner transport's vtable ("tcp" to the plugin).
const tw_transport_ops *inner_ops();

} // namespace twfuzz
