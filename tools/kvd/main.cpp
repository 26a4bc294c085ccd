// SPDX-License-Identifier: MIT
// twinwire-kvd: an in-memory key-value daemon speaking RESP2 over twinwire.
#include "client_limit.hpp"
#include "command_line.hpp"
#include "daemonize.hpp"
#include "keyspace.hpp"
#include "server.hpp"
#include "service_notify.hpp"
#include "settings.hpp"

#include <twinwire/log.hpp>
#include <twinwire/runtime.hpp>
#include <twinwire/transport.hpp>

#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <unistd.h>

#ifndef KVD_VERSION
#define KVD_VERSION "unknown"
#endif

namespace {

/// What the serving line adds for transports only this process can reach:
/// the framework's in-memory test transport, pair (docs/test-transports.md),
/// listens on an address and port of a namespace inside the process.  The
/// framework has no such property to ask, so the name is known here.
std::string reach_note(const std::string &transports)
{
    const std::string names = "+" + transports + "+";
    if (names.find("+pair+") == std::string::npos) return "";
    return " - pair is in-process only: no other process can connect to it";
}

void tell_service_manager(const std::string &state)
{
    std::string why = kvd::notify_service_manager(state);
    if (!why.empty()) TW_WARN("kvd", "cannot notify the service manager: %s", why.c_str());
}

/// Runs in the process that stays (the daemon after detaching): RDMA is
/// initialised here, never before a fork.
int serve(twinwire::Config config, kvd::Settings settings, const std::string &config_file,
          std::optional<kvd::Daemonizer> &daemon)
{
    std::unique_ptr<kvd::Pidfile> pidfile;
    if (!settings.pidfile.empty()) pidfile = std::make_unique<kvd::Pidfile>(settings.pidfile);
    kvd::MonotonicClock clock;
    kvd::Keyspace keyspace(clock);
    twinwire::Runtime runtime(std::move(config));
    runtime.start();
    // Before listening: a client beyond maxclients must still find a descriptor to be refused on.
    const kvd::ClientLimit fit =
        kvd::fit_clients_to_fd_limit(settings.maxclients, kvd::reserved_descriptors(runtime.config().threads()));
    if (fit.maxclients == 0) throw std::runtime_error(fit.notice + " - not one client fits");
    if (!fit.notice.empty()) TW_WARN("kvd", "%s", fit.notice.c_str());
    settings.maxclients = fit.maxclients;
    kvd::Server server(runtime, settings, keyspace, config_file);
    server.start();
    runtime.stop_on_signals({SIGTERM, SIGINT});
    // SIGHUP: what logrotate and certificate renewal (certbot's deploy hook) send.
    runtime.on_signal(SIGHUP, [&runtime, log_file = runtime.config().log_file()] {
        if (log_file.empty()) {
            TW_INFO("kvd", "SIGHUP: the log goes to stderr, nothing to reopen");
        } else {
            bool ok = twinwire::log::reopen();
            TW_LOG(ok ? twinwire::LogLevel::Info : twinwire::LogLevel::Error, "kvd", "SIGHUP: %s %s",
                   ok ? "log file reopened:" : "cannot reopen the log file, still writing to the old one:",
                   log_file.c_str());
        }
        runtime.reload_credentials(); // one line per transport with certificates (tls)
    });
    const std::string reach = reach_note(server.listening_transports());
    const std::string over = server.listening_transports() + server.own_ports();
    TW_INFO("kvd", "twinwire-kvd %s serving on %s:%u over %s (transport %s: %s), %zu thread(s), pid %d%s", KVD_VERSION,
            runtime.config().listen_address().c_str(), server.port(), over.c_str(), runtime.transport_name().c_str(),
            runtime.transport_reason().c_str(), runtime.loop_count(), static_cast<int>(getpid()), reach.c_str());
    if (daemon) daemon->ready();
    // Type=notify: systemd counts the service as started only now, and shows
    // the STATUS line in `systemctl status`.
    const std::string status = "serving on " + runtime.config().listen_address() + ":" + std::to_string(server.port()) +
                               " over " + over + " (transport " + runtime.transport_name() + ")" + reach;
    tell_service_manager("READY=1\nSTATUS=" + status + "\nMAINPID=" + std::to_string(getpid()));
    runtime.run();
    tell_service_manager("STOPPING=1\nSTATUS=stopped");
    TW_INFO("kvd", "stopped");
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    kvd::CommandLine cl;
    try {
        cl = kvd::parse_command_line(argc, argv);
    } catch (const kvd::UsageError &e) {
        std::fprintf(stderr, "twinwire-kvd: %s (see --help)\n", e.what());
        return 2;
    }
    twinwire::Config config;
    kvd::define_keys(config);
    if (cl.help) {
        twinwire::log::set_level(twinwire::LogLevel::Error); // listing plugins' keys loads them: no log lines
        // The plugins are found where the daemon would find them (plugin_path from the file, the environment
        // or --set); a mistake in the configuration is --check-config's to report, not --help's.
        try {
            kvd::load_config(config, cl);
        } catch (const twinwire::ConfigError &) {
        }
        std::fputs(kvd::usage_text(config).c_str(), stdout);
        return 0;
    }
    if (cl.version) {
        std::printf("twinwire-kvd %s\n", KVD_VERSION);
        return 0;
    }
    kvd::Settings settings;
    try {
        kvd::load_config(config, cl);
        twinwire::parse_log_level(config.log_level());
        settings = kvd::Settings::from(config);
        // Every transport's keys, whatever transport is chosen (serving checks them again at start-up).
        if (cl.check_config) twinwire::check_transport_keys(config);
    } catch (const twinwire::ConfigError &e) {
        std::fprintf(stderr, "twinwire-kvd: configuration error: %s\n", e.what());
        return 1;
    }
    if (cl.check_config) {
        std::printf("# twinwire-kvd: the configuration is valid; effective values:\n%s",
                    kvd::effective_config_text(config).c_str());
        return 0;
    }
    // As redis-server: a stray SIGALRM (nothing here sets a timer) or a
    // write to a closed socket does not end the daemon.  SIGUSR1/SIGUSR2
    // keep their default, which ends it, as they end redis-server.
    std::signal(SIGPIPE, SIG_IGN);
    std::signal(SIGALRM, SIG_IGN);

    const std::string log_file = config.log_file();
    std::optional<kvd::Daemonizer> daemon;
    try {
        if (settings.daemonize) {
            if (log_file.empty())
                std::fprintf(stderr, "twinwire-kvd: daemonize without log_file: the log is lost once started\n");
            daemon.emplace(kvd::Daemonizer::detach());
        }
        return serve(std::move(config), settings, cl.config_file, daemon);
    } catch (const std::exception &e) {
        TW_ERROR("kvd", "cannot serve: %s", e.what());
        // The log may be a file: say it where the person starting us looks too.
        if (!log_file.empty()) std::fprintf(stderr, "twinwire-kvd: cannot serve: %s\n", e.what());
        return 1;
    }
}
