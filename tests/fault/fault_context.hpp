// SPDX-License-Identifier: MIT
// The conformance harness (real loops, rule-checking endpoints) over the
// fault plugin loaded by name, with a configuration each case chooses.
#pragma once

#include "context.hpp"
#include "fault_ctrl.h"
#include "harness.hpp"

#include <twinwire/config.hpp>

#include <map>
#include <string>

namespace fault_test {

/// Make the next Env use the fault transport with these fault.* keys (and
/// fault.inner = tcp unless given): finalises the previous one.
void use_fault(const std::map<std::string, std::string> &keys);
/// The configuration the transport was made with (plugin_path set).
twinwire::Config fault_config(const std::map<std::string, std::string> &keys);

/// The connection's fault log (TW_FAULT_CTRL_LOG) and counters.
std::string fault_log(twinwire::conformance::Endpoint &e);
tw_fault_counts counts(twinwire::conformance::Endpoint &e);
tw_fault_counts totals();
/// A TCP port nothing listens on right now (bound and released).
uint16_t free_port();

} // namespace fault_test
