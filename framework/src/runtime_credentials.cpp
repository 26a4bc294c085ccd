// SPDX-License-Identifier: MIT
// Runtime::reload_credentials: TW_CTRL_RELOAD_CREDENTIALS in every loaded
// transport that understands it (ABI 1.4 and later), one log line each.
#include "runtime_impl.hpp"

#include <twinwire/log.hpp>

#include <cerrno>

namespace twinwire {

std::vector<CredentialsReload> Runtime::reload_credentials()
{
    std::vector<CredentialsReload> results;
    for (const auto &transport : impl_->selection.plugins) {
        const tw_transport_ops &ops = transport->ops();
        // An op of ABI 1.4 goes only to a plugin that knows it (twinwire/abi.h).
        if (ops.version < 4) continue;
        char text[512] = "";
        int rc = ops.ctrl(transport->handle(), nullptr, nullptr, TW_CTRL_RELOAD_CREDENTIALS, text, sizeof text);
        if (rc == -EOPNOTSUPP) continue;
        CredentialsReload r{transport->name(), rc == 0, text};
        if (r.message.empty()) r.message = rc == 0 ? "reloaded" : transport->error_text(rc);
        if (r.ok) TW_INFO("credentials", "%s: credentials reloaded: %s", r.transport.c_str(), r.message.c_str());
        else
            TW_ERROR("credentials", "%s: credentials not reloaded, the old ones stay: %s", r.transport.c_str(),
                     r.message.c_str());
        results.push_back(std::move(r));
    }
    return results;
}

} // namespace twinwire
