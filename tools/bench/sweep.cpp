// SPDX-License-Identifier: MIT
#include "sweep.hpp"

#include "latency_test.hpp"
#include "step_runner.hpp"
#include "text.hpp"
#include "throughput_test.hpp"

#include <algorithm>

namespace twinwire::bench {
namespace {

std::vector<std::string> errors_of(const Phase &phase)
{
    std::vector<std::string> errors;
    const auto &workers = phase.workers();
    for (size_t i = 0; i < workers.size(); ++i)
        if (!workers[i]->error.empty())
            errors.push_back("connection " + std::to_string(i + 1) + ": " + workers[i]->error);
    return errors;
}

Step latency_step(size_t size, const SweepOptions &o, SweepReport &report)
{
    const uint64_t iterations = o.iterations.value_or(0);
    const double duration = o.duration_or_default();
    Step step;
    step.label = "latency " + format_size(size);
    step.unit = Progress::Unit::RoundTrips;
    const bool zero_copy = o.zero_copy;
    step.make = [=](unsigned) { return std::make_shared<LatencyWorker>(size, iterations, duration, zero_copy); };
    step.collect = [size, &o, &report](const Phase &phase) {
        count_connections(phase, report.connections);
        LatencyResult r;
        r.size = size;
        r.connections = o.connections;
        for (const auto &w : phase.workers()) r.round_trip_ns.merge(static_cast<const LatencyWorker &>(*w).histogram);
        r.seconds = measured_seconds(phase);
        r.stats = summed_stats(phase);
        r.rings = summed_rings(phase);
        r.io_path = io_path(o.zero_copy, r.stats);
        r.errors = errors_of(phase);
        report.latency.push_back(std::move(r));
    };
    return step;
}

Step throughput_step(size_t size, const SweepOptions &o, SweepReport &report)
{
    const uint64_t iterations = o.iterations.value_or(0);
    const double duration = o.duration_or_default();
    Step step;
    step.label = (o.bidirectional ? "throughput both ways " : "throughput ") + format_size(size);
    step.unit = Progress::Unit::Bytes;
    const bool zero_copy = o.zero_copy, both = o.bidirectional;
    step.make = [=](unsigned) {
        return std::make_shared<ThroughputWorker>(size, iterations, duration, zero_copy, both);
    };
    step.collect = [size, &o, &report](const Phase &phase) {
        count_connections(phase, report.connections);
        ThroughputResult r;
        r.size = size;
        r.connections = o.connections;
        r.bidirectional = o.bidirectional;
        for (const auto &w : phase.workers()) {
            if (!w->error.empty()) continue;
            const auto &t = static_cast<const ThroughputWorker &>(*w);
            // Both directions: what went out and what came back, as ib_write_bw -b sums them.
            uint64_t moved = t.acknowledged + (t.bidirectional ? t.bytes : 0);
            r.bytes += moved;
            r.messages += moved / size;
        }
        r.seconds = measured_seconds(phase);
        r.stats = summed_stats(phase);
        r.rings = summed_rings(phase);
        r.io_path = io_path(o.zero_copy, r.stats);
        r.errors = errors_of(phase);
        report.throughput.push_back(std::move(r));
    };
    return step;
}

} // namespace

SweepReport run_sweep(Runtime &rt, const TargetOptions &target, const SweepOptions &options)
{
    SweepReport report;
    report.target = target.host + ":" + std::to_string(target.port);
    report.transport = rt.transport_name();
    report.transport_reason = rt.transport_reason();
    report.threads = static_cast<unsigned>(rt.loop_count());
    std::vector<Step> steps;
    for (TestKind kind : options.tests)
        for (size_t size : options.sizes)
            steps.push_back(kind == TestKind::Latency ? latency_step(size, options, report)
                                                      : throughput_step(size, options, report));
    StepSettings settings{target, options.connections, options.stall_timeout_s};
    report.interrupted = !run_steps(rt, settings, std::move(steps));
    return report;
}

} // namespace twinwire::bench
