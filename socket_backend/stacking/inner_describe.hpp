// SPDX-License-Identifier: MIT
// For plugins stacked over an inner transport (tls, fault): the inner
// transport's describe() text, each line prefixed with "inner.", so that
// twinwire-info shows both layers apart. Header-only: each plugin is built
// on plugin_api alone.
#pragma once

#include <twinwire/transport.h>

#include <algorithm>
#include <string>

namespace twinwire::stacking {

inline std::string inner_description(const tw_transport_ops *inner, tw_transport *inner_t)
{
    char buf[4096];
    int got = inner->describe(inner_t, buf, sizeof buf);
    if (got <= 0) return {};
    std::string lines(buf, std::min<size_t>(static_cast<size_t>(got), sizeof buf - 1));
    std::string text;
    size_t at = 0;
    while (at < lines.size()) {
        size_t nl = lines.find('\n', at);
        std::string line = lines.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        if (!line.empty()) text += "inner." + line + "\n";
        if (nl == std::string::npos) break;
        at = nl + 1;
    }
    return text;
}

} // namespace twinwire::stacking
