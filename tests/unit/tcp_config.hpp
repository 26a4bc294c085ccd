// SPDX-License-Identifier: MIT
// The configuration the runtime tests start from: TCP, any free port, quiet.
#pragma once

#include <twinwire/config.hpp>

#include <string>

inline twinwire::Config tcp_config(unsigned threads)
{
    twinwire::Config c;
    c.set("transport", "tcp");
    c.set("threads", std::to_string(threads));
    c.set("listen_port", "0");
    c.set("log_level", "warn");
    return c;
}
