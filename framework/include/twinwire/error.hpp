// SPDX-License-Identifier: MIT
// Errors a program can branch on: twinwire::errc codes (a std::error_code
// category), the StartupError exception that carries one, and ConnectError,
// the value a connect handler gets.
#pragma once

#include <twinwire/export.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>

namespace twinwire {

/**
 * What went wrong, whatever the transport.  Where a standard condition fits,
 * the code also compares equal to it (errc::address_in_use ==
 * std::errc::address_in_use, errc::connection_refused ==
 * std::errc::connection_refused, errc::timed_out == std::errc::timed_out,
 * ...), so code written against errno names works too.  Values are stable:
 * new ones are only appended.
 */
enum class errc {
    // Start-up: Runtime::start(), listen(), Config.
    bad_config = 1,        ///< a configuration value, line or file is wrong (ConfigError)
    unknown_config_key,    ///< a key nobody knows (ConfigError)
    transport_unavailable, ///< the transport(s) asked for cannot be loaded or initialised
    address_in_use,        ///< listen: the address and port are taken
    address_unavailable,   ///< listen or connect: the address is not one of this host's
    permission_denied,     ///< e.g. a port below 1024 without the capability
    not_started,           ///< a call that needs Runtime::start() first (or start() twice)
    runtime_stopping,      ///< the runtime is stopping: nothing new is accepted
    wrong_thread,          ///< called on a thread the call does not allow
    // Connecting (ConnectError::code).
    connection_refused,   ///< nothing listens there
    timed_out,            ///< connect, flush-at-close or keepalive timeout
    unreachable,          ///< no route to the host or network
    resolve_failed,       ///< the name does not resolve
    transport_not_loaded, ///< ConnectOptions::transport names a transport not loaded
    protocol_mismatch,    ///< the peer does not speak this transport
    // How a connection ended (CloseInfo::code), beside timed_out.
    closed_locally,  ///< this side called close() (or the runtime stopped)
    aborted,         ///< this side called abort(): queued output dropped
    peer_closed,     ///< the peer ended its stream (clean end)
    peer_reset,      ///< the peer reset the connection
    transport_error, ///< any other failure the transport reported (CloseInfo::error has it)
    callback_threw,  ///< an application callback threw: the connection was closed
    record_too_long, ///< read_until: no delimiter within the maximum asked for
    // One-sided remote memory (rma.hpp).
    remote_access_refused, ///< the peer refused an access: bounds, mode, revoked, another connection's
    rma_unavailable,       ///< RMA is not enabled on this connection (enable_rma on both ends)
};

/// The category of errc ("twinwire").
TW_API const std::error_category &error_category() noexcept;
inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), error_category()}; }

/// The errc for an error a transport returned (a negative errno or TW_E*
/// code): -ECONNREFUSED -> connection_refused, -ETIMEDOUT -> timed_out, ...,
/// anything unnamed -> transport_error.
TW_API std::error_code code_from_transport(int err) noexcept;

/**
 * Thrown when a program cannot start serving: a configuration mistake
 * (ConfigError, which derives from this), the transport cannot be used, the
 * address is in use, a call out of order.  what() says it in one line;
 * code() is what to branch on.
 */
class TW_API StartupError : public std::runtime_error {
public:
    StartupError(std::error_code code, const std::string &what);
    StartupError(errc code, const std::string &what);
    const std::error_code &code() const noexcept;
    /// Declared so that moving copies: a moved-from error keeps its code.
    StartupError(const StartupError &other) = default;
    StartupError &operator=(const StartupError &other) = default;

private:
    /// Its code (framework/src/error.cpp); shared, as copying an exception must not throw.
    struct Impl;
    std::shared_ptr<const Impl> impl_;
};

/**
 * Why a connect failed, as given to a ConnectHandler: empty (false) when it
 * succeeded.  It converts to the message text, so handlers written as
 * (const ConnectionPtr &, const std::string &) keep working.
 */
struct TW_API ConnectError {
    std::error_code code; ///< errc::connection_refused, errc::timed_out, ...
    std::string message;  ///< "connect to 10.0.0.1:6379 over tcp: connect: Connection refused"
    explicit operator bool() const noexcept { return static_cast<bool>(code); }
    operator const std::string &() const noexcept { return message; }
};

} // namespace twinwire

namespace std {
template <> struct is_error_code_enum<twinwire::errc> : true_type {
};
} // namespace std
