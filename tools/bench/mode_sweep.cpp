// SPDX-License-Identifier: MIT
// `client` and `local`: the latency / throughput sweep, printed.
#include "bench_server.hpp"
#include "modes.hpp"
#include "runtime_setup.hpp"
#include "sweep.hpp"

#include <cstdio>

namespace twinwire::bench {
namespace {

int print_report(const SweepReport &report, const SweepOptions &options)
{
    const std::string text = options.json ? sweep_json(report) : options.csv ? sweep_csv(report) : sweep_table(report);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    if (report.error_count() > 0) {
        std::fprintf(stderr, "twinwire-bench: %zu connection(s) failed; see the errors above\n", report.error_count());
        return 1;
    }
    return 0;
}

} // namespace

int run_client(const ClientOptions &options)
{
    Runtime rt(make_config(options.runtime));
    rt.start();
    std::fprintf(stderr, "twinwire-bench client: %s\n", describe_transport(rt).c_str());
    RunMetadata meta = describe_run(rt, options.runtime.args);
    SweepReport report = run_sweep(rt, options.target, options.sweep);
    report.mode = "client";
    report.meta = std::move(meta);
    return print_report(report, options.sweep);
}

int run_local(const LocalOptions &options)
{
    Runtime rt(make_config(options.runtime));
    rt.start();
    ListenOptions listen;
    listen.address = options.listen;
    listen.port = 0;
    auto listener = rt.listen(listen, [](const ConnectionPtr &c) { serve_bench_connection(c); });
    std::fprintf(stderr, "twinwire-bench local: %s\n", describe_transport(rt).c_str());
    TargetOptions target;
    target.host = options.listen;
    target.port = listener->port();
    target.source = options.source;
    RunMetadata meta = describe_run(rt, options.runtime.args);
    SweepReport report = run_sweep(rt, target, options.sweep);
    report.mode = "local";
    report.meta = std::move(meta);
    return print_report(report, options.sweep);
}

} // namespace twinwire::bench
