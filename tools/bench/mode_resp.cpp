// SPDX-License-Identifier: MIT
// `resp`: Redis-protocol load over any twinwire transport.
#include "modes.hpp"
#include "resp_load.hpp"
#include "resp_report.hpp"
#include "runtime_setup.hpp"
#include "step_runner.hpp"

#include <cstdio>

namespace twinwire::bench {
namespace {

Step resp_step(RespTest test, const RespOptions &o, RespReport &report)
{
    auto pool = std::make_shared<RequestPool>(o.requests);
    Step step;
    step.label = to_string(test);
    step.unit = Progress::Unit::Requests;
    step.make = [test, &o, pool](unsigned index) {
        return std::make_shared<RespWorker>(test, o, pool, uint64_t(index) * 8 + static_cast<uint64_t>(test));
    };
    step.collect = [test, &o, &report](const Phase &phase) {
        RespResult r;
        r.test = to_string(test);
        r.requested = o.requests;
        const auto &workers = phase.workers();
        for (size_t i = 0; i < workers.size(); ++i) {
            const auto &w = static_cast<const RespWorker &>(*workers[i]);
            r.replies += w.replies;
            r.error_replies += w.error_replies;
            r.latency_ns.merge(w.latency_ns);
            if (!w.first_error.empty()) r.errors.push_back("client " + std::to_string(i + 1) + ": " + w.first_error);
            if (!w.error.empty()) r.errors.push_back("client " + std::to_string(i + 1) + ": " + w.error);
        }
        r.seconds = measured_seconds(phase);
        count_connections(phase, report.connections);
        report.results.push_back(std::move(r));
    };
    return step;
}

} // namespace

int run_resp(const RespOptions &options)
{
    Runtime rt(make_config(options.runtime));
    rt.start();
    std::fprintf(stderr, "twinwire-bench resp: %s\n", describe_transport(rt).c_str());
    RespReport report;
    report.meta = describe_run(rt, options.runtime.args);
    report.target = options.target.host + ":" + std::to_string(options.target.port);
    report.transport = rt.transport_name();
    report.transport_reason = rt.transport_reason();
    report.clients = options.clients;
    report.pipeline = options.pipeline;
    report.data_size = options.data_size;
    report.keyspace = options.keyspace;
    std::vector<Step> steps;
    for (RespTest test : options.tests) steps.push_back(resp_step(test, options, report));
    StepSettings settings{options.target, options.clients, options.stall_timeout_s};
    report.interrupted = !run_steps(rt, settings, std::move(steps));

    const std::string text = options.json ? resp_json(report) : options.csv ? resp_csv(report) : resp_table(report);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    if (report.error_count() > 0) {
        std::fprintf(stderr, "twinwire-bench resp: %llu request(s) failed; see the errors above\n",
                     static_cast<unsigned long long>(report.error_count()));
        return 1;
    }
    return report.interrupted ? 1 : 0;
}

} // namespace twinwire::bench
