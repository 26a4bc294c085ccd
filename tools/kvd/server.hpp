// SPDX-License-Identifier: MIT
// The daemon on the runtime: accepts clients, runs their sessions, sweeps
// expired keys, answers INFO and CONFIG GET.
#pragma once

#include "commands.hpp"
#include "keyspace.hpp"
#include "session.hpp"
#include "settings.hpp"

#include <twinwire/runtime.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kvd {

class Server : public Host {
public:
    Server(twinwire::Runtime &runtime, const Settings &settings, Keyspace &keyspace, std::string config_file);
    ~Server() override;

    /// Listen (throws twinwire::StartupError) and start the expiry sweep.
    /// On the runtime's main thread, after Runtime::start().
    void start();
    uint16_t port() const;
    /// "tcp", "rdma+tcp": what the listener accepts.
    std::string listening_transports() const;
    /// " (tls on port 6380)": transports listening on a port of their own
    /// (NAME.listen_port), "" when all share port().
    std::string own_ports() const;

    std::string info(const std::vector<std::string_view> &sections, const Session &caller) override;
    std::vector<std::pair<std::string, std::string>> config_parameters() override;

private:
    struct Client;
    /// Counters written by one loop's thread only (no cache line shared).
    struct alignas(64) LoopStats {
        SessionCounters session;
        std::atomic<uint64_t> accepted{0};
    };

    /// admit() and serve_requests() under a catch of std::bad_alloc: an
    /// allocation failure closes that one client, never the daemon.
    void accept(const twinwire::ConnectionPtr &conn);
    void admit(const twinwire::ConnectionPtr &conn);
    /// Serve what `feed` runs (requests from the input buffer, or from a
    /// borrowed receive buffer) until it is idle, closing or paused.
    Session::Outcome serve(twinwire::Connection &conn, Client &client, const std::function<Session::Outcome()> &feed);
    Session::Outcome serve_requests(twinwire::Connection &conn, Client &client,
                                    const std::function<Session::Outcome()> &feed);
    /// kvd.zero_copy: the requests in bytes the transport lent; returns the bytes used.
    size_t serve_borrowed(twinwire::Connection &conn, Client &client, std::string_view bytes);
    /// Hand the gathered replies to the connection now; false when it is gone.
    bool send(twinwire::Connection &conn, Client &client);
    void finish(twinwire::Connection &conn, Client &client, const twinwire::CloseInfo &info);
    uint64_t total(std::atomic<uint64_t> LoopStats::*field) const;
    uint64_t total_session(std::atomic<uint64_t> SessionCounters::*field) const;
    void info_section(const std::string &name, const Session &caller, std::string &out);

    twinwire::Runtime &runtime_;
    Settings settings_;
    Keyspace &keyspace_;
    std::string config_file_;
    std::shared_ptr<twinwire::Listener> listener_;
    std::unique_ptr<twinwire::Timer> sweep_timer_;
    std::vector<std::unique_ptr<LoopStats>> loop_stats_;
    std::atomic<size_t> clients_{0};
    /// Connected clients per transport: tcp and rdma always, then every
    /// other loaded transport by its name.  Fixed at construction: no lock.
    std::vector<std::pair<std::string, std::unique_ptr<std::atomic<size_t>>>> clients_by_transport_;
    std::atomic<uint64_t> rejected_{0};
    int64_t started_ms_;
};

} // namespace kvd
