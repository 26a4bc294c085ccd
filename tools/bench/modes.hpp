// SPDX-License-Identifier: MIT
// The four modes of twinwire-bench; each returns the exit status.
#pragma once

#include "options.hpp"

namespace twinwire::bench {

int run_server(const ServerOptions &options);
int run_client(const ClientOptions &options);
int run_local(const LocalOptions &options);
int run_resp(const RespOptions &options);
int run_rma(const RmaOptions &options);

} // namespace twinwire::bench
