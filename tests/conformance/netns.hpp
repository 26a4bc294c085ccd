// SPDX-License-Identifier: MIT
// A private network namespace in which one subnet never answers.
#pragma once

#include <string>

namespace twinwire::conformance {

/// The subnet routed into `lo` inside the namespace: nothing there answers,
/// packets are dropped, so a connect to it hangs until its timeout.
constexpr const char *kSilentAddress = "10.88.0.1";

/// Move the process (call it while single-threaded) into a new network
/// namespace with `lo` up and kSilentAddress's /24 routed into `lo`.
/// Returns false with the reason when the namespace cannot be made.
bool enter_silent_netns(std::string *why);

} // namespace twinwire::conformance
