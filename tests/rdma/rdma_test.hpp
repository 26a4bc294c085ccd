// SPDX-License-Identifier: MIT
// Shared pieces of the RDMA-specific suite: the context (addresses in the
// SoftRoCE guest, rdma.* overrides), log capture, helper processes.
#pragma once

#include "../../tools/conformance/addresses.hpp"
#include "../../tools/conformance/context.hpp"
#include "../../tools/conformance/harness.hpp"
#include "../../tools/conformance/payload.hpp"

#include <twinwire/config.hpp>
#include <twinwire/runtime.hpp>
#include <twinwire/log.hpp>

#include <map>
#include <string>
#include <vector>

namespace twinwire::rdmatest {

/// Replace the transport under test by one created with these rdma.* keys
/// (on top of the suite's defaults).  Empty map: the defaults.
void use_settings(const std::map<std::string, std::string> &settings);
/// True when the suite runs over the built-in TCP (fault-matrix --tcp).
bool testing_tcp();
/// The common main: `--child MODE ...` helpers, `--tcp` (built-in TCP on
/// 127.0.0.1), else the SoftRoCE guest (77 outside it) across the wire or
/// `--one-device`; the remaining arguments go to Catch2.
int run_suite(int argc, char **argv);
/// Load and init a separate transport with `settings`; nullptr and *why on refusal.
std::unique_ptr<Transport> make_transport(const std::map<std::string, std::string> &settings, std::string *why);

/// The transport's counters (TW_CTRL_GET_TRANSPORT_STATS).
tw_transport_stats transport_stats(conformance::Env &env);

/// The transport's describe() text (what twinwire-info prints).
std::string transport_description(conformance::Env &env);
bool contains(const std::string &text, const std::string &part);
/// What a daemon does: close the accepted connections of `server` (on
/// `loop`) that failed or ended (end-of-stream, nothing left to send).
void close_finished(conformance::Env &env, conformance::Server &server, unsigned loop);

/// Counts log lines at WARN or worse while alive (and keeps their text).
class LogWatch {
public:
    LogWatch();
    ~LogWatch();
    size_t warnings() const;
    std::string text() const;
};

/// Run `program` with `args` to its end; returns the exit status (or
/// -signal) and its stdout + stderr.
int run_program(const std::string &program, const std::vector<std::string> &args, std::string *output);
/// Run this executable again as `--child MODE args...` and collect its
/// output; returns the exit status (or -signal).
int run_child(const std::vector<std::string> &args, std::string *output);
/// Start `--child MODE args...` in the background; returns its pid and the
/// first line it prints (e.g. a port).
pid_t start_child(const std::vector<std::string> &args, std::string *first_line);

/// QPs the kernel reports for all devices (`rdma resource show`), or -1.
long qp_count();

/// Bytes of every memory region this process registered, as the kernel
/// reports them (`rdma resource show mr pid PID`, the mrlen of each), or -1.
long long registered_by_this_process();

/// Lines of the kernel log (syslog(2), root in the guest) containing
/// `needle`, or -1 when the log cannot be read.
long kernel_log_count(const std::string &needle);

/// An echo server under the framework's Runtime (transport `mode`) on
/// `ip`, started, not yet run.  It listens while `listener` lives.
struct EchoRuntime {
    std::unique_ptr<Runtime> rt;
    std::shared_ptr<Listener> listener;
};
EchoRuntime start_echo_runtime(const std::string &mode, const std::string &ip);

/// Child modes (run_suite dispatches to them).
int child_memlock();
int child_no_device();
int child_server(bool echo);
int child_runtime_echo(const std::string &mode, const std::string &ip);
int child_rma_expose();
int child_rma_bench_server(); // rma_bench.cpp
int child_rma_bench_client(int argc, char **argv);
int child_lat_bench_server(); // lat_bench.cpp
int child_lat_bench_client(int argc, char **argv);
int child_idle_bench(int argc, char **argv); // idle_bench.cpp
/// Echo what arrives at once, as the lean latency server does (lat_bench.cpp).
bool lean_echo(conformance::Endpoint &e, uint32_t events);
/// Write `len` bytes now; what the transport does not take waits in the endpoint's queue.
void write_all(conformance::Endpoint &e, const char *p, size_t len);

} // namespace twinwire::rdmatest
