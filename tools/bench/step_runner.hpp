// SPDX-License-Identifier: MIT
// Runs tests one after another on a started runtime: for each, a Phase of
// N connections, a progress line each second, the stall watchdog, and a
// collect callback once the last connection has finished.  SIGINT aborts
// the running test and skips the rest.
#pragma once

#include "phase.hpp"
#include "progress.hpp"

#include <functional>
#include <string>
#include <vector>

namespace twinwire::bench {

struct Step {
    std::string label;                          ///< "latency 64 B", "SET"
    Progress::Unit unit;                        ///< what the progress line counts
    Phase::MakeWorker make;                     ///< one worker per connection
    std::function<void(const Phase &)> collect; ///< on loop 0, after the last worker finished
};

struct StepSettings {
    TargetOptions target;
    unsigned connections = 1;
    unsigned stall_timeout_s = 30;
};

/// Runs rt.run() until every step is done, then stops the runtime.
/// Returns false when interrupted.
bool run_steps(Runtime &rt, const StepSettings &settings, std::vector<Step> steps);

} // namespace twinwire::bench
