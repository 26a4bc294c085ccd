// SPDX-License-Identifier: MIT
#include <twinwire/error.hpp>
#include <twinwire/errors.h>

#include <cerrno>

namespace twinwire {
namespace {

class Category : public std::error_category {
public:
    const char *name() const noexcept override { return "twinwire"; }

    std::string message(int value) const override
    {
        switch (static_cast<errc>(value)) {
        case errc::bad_config:
            return "bad configuration";
        case errc::unknown_config_key:
            return "unknown configuration key";
        case errc::transport_unavailable:
            return "transport unavailable";
        case errc::address_in_use:
            return "address in use";
        case errc::address_unavailable:
            return "address not available";
        case errc::permission_denied:
            return "permission denied";
        case errc::not_started:
            return "runtime not started";
        case errc::runtime_stopping:
            return "runtime stopping";
        case errc::wrong_thread:
            return "called on the wrong thread";
        case errc::connection_refused:
            return "connection refused";
        case errc::timed_out:
            return "timed out";
        case errc::unreachable:
            return "unreachable";
        case errc::resolve_failed:
            return "name resolution failed";
        case errc::transport_not_loaded:
            return "transport not loaded";
        case errc::protocol_mismatch:
            return "peer does not speak this transport";
        case errc::closed_locally:
            return "closed locally";
        case errc::aborted:
            return "aborted locally";
        case errc::peer_closed:
            return "peer closed the connection";
        case errc::peer_reset:
            return "connection reset by peer";
        case errc::transport_error:
            return "transport error";
        case errc::callback_threw:
            return "a callback threw";
        case errc::record_too_long:
            return "record longer than the maximum";
        case errc::remote_access_refused:
            return "remote memory access refused";
        case errc::rma_unavailable:
            return "remote memory access not enabled on this connection";
        }
        return "unknown twinwire error";
    }

    // Where a standard condition fits, the code compares equal to it.
    std::error_condition default_error_condition(int value) const noexcept override
    {
        switch (static_cast<errc>(value)) {
        case errc::address_in_use:
            return std::errc::address_in_use;
        case errc::address_unavailable:
            return std::errc::address_not_available;
        case errc::permission_denied:
            return std::errc::permission_denied;
        case errc::connection_refused:
            return std::errc::connection_refused;
        case errc::timed_out:
            return std::errc::timed_out;
        case errc::unreachable:
            return std::errc::host_unreachable;
        case errc::peer_reset:
            return std::errc::connection_reset;
        case errc::record_too_long:
            return std::errc::message_size;
        default:
            return {value, *this};
        }
    }
};

} // namespace

const std::error_category &error_category() noexcept
{
    static const Category category;
    return category;
}

struct __attribute__((visibility("hidden"))) StartupError::Impl {
    std::error_code code;
};

StartupError::StartupError(std::error_code code, const std::string &what)
    : std::runtime_error(what), impl_(std::make_shared<Impl>(Impl{code}))
{
}

StartupError::StartupError(errc code, const std::string &what) : StartupError(make_error_code(code), what) {}

const std::error_code &StartupError::code() const noexcept { return impl_->code; }

std::error_code code_from_transport(int err) noexcept
{
    switch (err < 0 ? -err : err) {
    case ECONNREFUSED:
        return errc::connection_refused;
    case ETIMEDOUT:
    case TW_EPEERDEAD:
        return errc::timed_out;
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EHOSTDOWN:
    case ENETDOWN:
        return errc::unreachable;
    case ECONNRESET:
    case EPIPE:
        return errc::peer_reset;
    case EADDRINUSE:
        return errc::address_in_use;
    case EADDRNOTAVAIL:
        return errc::address_unavailable;
    case EACCES:
    case EPERM:
        return errc::permission_denied;
    case TW_EPEERPROTO:
        return errc::protocol_mismatch;
    case TW_EREMOTEACCESS:
        return errc::remote_access_refused;
    default:
        return errc::transport_error;
    }
}

} // namespace twinwire
