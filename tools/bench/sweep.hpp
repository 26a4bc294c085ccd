// SPDX-License-Identifier: MIT
// The client side of `client` and `local`: every test at every size, one
// after the other, with a progress line each second.
#pragma once

#include "options.hpp"
#include "sweep_report.hpp"

#include <twinwire/runtime.hpp>

namespace twinwire::bench {

/// Run the sweep against `target` on a started runtime (this runs rt.run()
/// and stops the runtime at the end).  SIGINT ends it early with the
/// results so far.
SweepReport run_sweep(Runtime &rt, const TargetOptions &target, const SweepOptions &options);

} // namespace twinwire::bench
