// SPDX-License-Identifier: MIT
// What the runtime (and only the runtime) may do with a Connection.
#pragma once

#include <twinwire/config.hpp>
#include <twinwire/connection.hpp>

#include <functional>
#include <memory>
#include <string>

namespace twinwire {

struct ConnectionAccess {
    /// The handshake's outcome: error 0 (TW_EV_CONNECTED) or its error, and why.
    using Established = std::function<void(const std::shared_ptr<Connection> &, int error, const std::string &why)>;

    /// Wrap a transport connection that is still handshaking.  The
    /// connection keeps itself alive until it ends; `on_established` runs
    /// once with error 0 (TW_EV_CONNECTED) or the handshake's error.
    /// Returns nullptr (and closes `conn`) when set_callback fails.
    /// `handler` names the application code on_established runs ("accept
    /// handler"), for the log line when it throws.
    static std::shared_ptr<Connection> create(Loop &loop, Transport &transport, tw_conn *conn, uint64_t id,
                                              const Config &config, const char *handler, Established on_established);
    /// Runs when the connection ends, before on_close (unregistering).
    static void set_on_finished(Connection &c, std::function<void(Connection &)> fn);
    static void set_fallback_reason(Connection &c, std::string reason);
};

} // namespace twinwire
