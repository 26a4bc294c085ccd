// SPDX-License-Identifier: MIT
// The server side of the bench protocol (see wire.hpp): echo or sink,
// chosen by the hello each connection starts with.
#pragma once

#include <twinwire/connection.hpp>

namespace twinwire::bench {

/// Take over an accepted connection (call from the accept handler).
void serve_bench_connection(const ConnectionPtr &conn);

} // namespace twinwire::bench
