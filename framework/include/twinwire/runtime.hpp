// SPDX-License-Identifier: MIT
// The runtime of a twinwire process: transports, one loop per thread,
// listeners, client connections, signals and graceful shutdown.
#pragma once

#include <twinwire/export.hpp>

#include <twinwire/config.hpp>
#include <twinwire/connection.hpp>
#include <twinwire/error.hpp>
#include <twinwire/loop.hpp>
#include <twinwire/transport.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace twinwire {

class Runtime;
struct ListenerImpl;

struct TW_API ListenOptions {
    std::string address; ///< "" = config listen_address; "unix:/path", "unix:@name", "*" (IPv6 and IPv4)
    int port = -1;       ///< -1 = config listen_port (and NAME.listen_port); 0 = any free port
    int backlog = -1;    ///< -1 = config listen_backlog
    /// Socket activation (a service manager passed listening sockets,
    /// LISTEN_FDS): the one named so in LISTEN_FDNAMES; "" = the next one
    /// not yet taken.  Without passed sockets (or all taken) the listener binds.
    std::string fd_name = {};
};

/// A listening endpoint: one listener per transport in use (auto: TCP and,
/// when RDMA is in use, RDMA), all on the same address, and on the same port
/// but for transports the configuration gives their own (NAME.listen_port,
/// used when listen() is given no port).
class TW_API Listener {
public:
    ~Listener();
    /// The port of the first transport in order of preference (the one the
    /// kernel chose when asked for port 0).
    uint16_t port() const;
    /// The port `transport` listens on here: its own NAME.listen_port or the
    /// shared one; 0 when it does not listen here.
    uint16_t port(const std::string &transport) const;
    const std::string &address() const;
    /// "rdma", "tcp", "foo": what this endpoint accepts, in order of preference.
    std::vector<std::string> transports() const;
    /// Stop accepting (connections already accepted stay).  Idempotent.
    /// Destroying the Listener closes it too.
    void close();

private:
    friend class Runtime;
    explicit Listener(std::shared_ptr<ListenerImpl> impl);
    std::shared_ptr<ListenerImpl> impl_;
};

/// A new server-side connection; runs on the connection's own loop.
using AcceptHandler = std::function<void(const ConnectionPtr &)>;

struct TW_API ConnectOptions {
    ConnectOptions() = default;
    ConnectOptions(std::string peer, uint16_t peer_port) : address(std::move(peer)), port(peer_port) {}

    std::string address; ///< peer address (IPv4, IPv6 or a host name)
    uint16_t port = 0;
    std::string source_address; ///< bind the local end (RDMA: choose the device)
    uint32_t timeout_ms = 0;    ///< 0 = config connect_timeout_ms
    int loop = -1;              ///< which loop owns it; -1 = round robin
    /// A loaded transport by name ("tcp", "rdma", "foo"): that one, no
    /// fallback.  Default: the transports in use, in order, a failed connect
    /// retried over the next one (auto: RDMA, then TCP).
    std::optional<std::string> transport;
};

/// The outcome of connect(): a connection and an empty error, or nullptr and
/// the error (error.code: errc::connection_refused, errc::timed_out,
/// errc::unreachable, errc::resolve_failed, ...; error.message: one line).
/// Runs on the connection's loop.  A handler taking (const ConnectionPtr &,
/// const std::string &) gets the message.
using ConnectHandler = std::function<void(const ConnectionPtr &, const ConnectError &error)>;

/**
 * Lifetime: construct with a Config on the main thread, start(), set up
 * listeners / connections, run() until stop().  Loop 0 belongs to the thread
 * that constructed the runtime; loops 1..threads-1 run on worker threads
 * from start() on.
 */
/// What Runtime::reload_credentials did in one transport.
struct TW_API CredentialsReload {
    std::string transport; ///< "tls"
    bool ok = false;
    /// What the transport uses now ("CN=example.org, expires ..."), or why
    /// it kept what it had (the key, the file, OpenSSL's reason).
    std::string message;
};

/// One transport of a running Runtime (Runtime::status).
struct TW_API TransportStatus {
    std::string name;                   ///< "tcp", "tls", "rdma"
    std::vector<std::string> listening; ///< "127.0.0.1:6380", "unix:/run/x.sock": its open listeners
    size_t connections = 0;             ///< open now, accepted and connected
};

class TW_API Runtime {
public:
    explicit Runtime(Config config);
    ~Runtime(); ///< stops (without drain) if still running
    Runtime(const Runtime &) = delete;
    Runtime &operator=(const Runtime &) = delete;

    /// Apply logging settings, select transports (throws StartupError with
    /// errc::transport_unavailable when a transport named alone, or every
    /// one of a list, is not usable; ConfigError, a StartupError, for
    /// configuration mistakes), create the loops and threads.
    void start();

    const Config &config() const;
    /// The first transport in use ("rdma", "tcp", "foo"), and why (one line).
    const std::string &transport_name() const;
    const std::string &transport_reason() const;
    const TransportSelection &selection() const;
    /// A loaded transport by name (tcp always), or nullptr.
    Transport *transport(const std::string &name) const;

    size_t loop_count() const;
    /// Throws std::out_of_range past loop_count().
    Loop &loop(size_t index);

    /// Listen over every transport in use, on one address and port (every
    /// address of a host name; a socket passed by systemd when there is
    /// one, see ListenOptions::fd_name).  Called
    /// on the main thread, it binds before returning and throws StartupError
    /// on failure (code() errc::address_in_use, errc::address_unavailable,
    /// errc::permission_denied, errc::resolve_failed, ...; with several
    /// transports in use, one other than the last that cannot listen here is
    /// skipped with a warning).  Keep the Listener: destroying it stops
    /// listening (and says so in the log).
    [[nodiscard]] std::shared_ptr<Listener> listen(const ListenOptions &options, AcceptHandler on_accept);

    /// Connect.  With several transports in use (auto with RDMA, or a
    /// list), a connect that fails for any reason (refused, unreachable,
    /// timed out, a peer that does not speak it) is retried over the next
    /// transport in use, and ConnectionPtr::fallback_reason() says why.
    /// Any thread.
    void connect(const ConnectOptions &options, ConnectHandler on_done);

    /// Run loop 0 on this thread until stop() (or a stop signal) completes.
    void run();
    /// Stop: close listeners, let connections flush (drain = true, at most
    /// shutdown_timeout_ms), stop every loop.  Any thread.
    void stop(bool drain = true);
    /// Stop gracefully on these signals (SIGTERM, SIGINT), handled on loop 0.
    void stop_on_signals(const std::vector<int> &signals);
    /// Run `handler` on loop 0 when `signal` arrives (SIGHUP: reopen logs).
    void on_signal(int signal, std::function<void()> handler);

    /// Read the certificates, keys and CAs again from the files the
    /// configuration names (tls.cert_file, tls.key_file, tls.ca_file,
    /// tls.ca_dir), in every loaded transport that has credentials.  Open
    /// connections keep their sessions; handshakes that start afterwards use
    /// the new files.  A transport whose files fail to load keeps its old
    /// credentials.  One log line per transport (info, or error with the
    /// reason); transports without credentials are left out of the result.
    /// Any thread, after start().
    std::vector<CredentialsReload> reload_credentials();

    /// Live connections on all loops (approximate while loops run).
    size_t connection_count() const;
    /// Every loaded transport: where it listens and how many connections it
    /// holds (approximate while loops run).  Any thread, after start().
    /// With `status_socket = PATH` the runtime answers the same on a Unix
    /// socket, for `twinwire-info --status PATH`.
    std::vector<TransportStatus> status() const;

    struct Impl;

private:
    /// Its configuration, transports, loops and the rest (framework/src/runtime_impl.hpp).
    std::unique_ptr<Impl> impl_;
};

} // namespace twinwire
