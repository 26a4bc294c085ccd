// SPDX-License-Identifier: MIT
#include "settings.hpp"

namespace kvd {

void define_keys(twinwire::Config &config)
{
    using namespace twinwire;
    config.define({"kvd.maxclients", "10000",
                   "clients served at once (lowered at start-up to what the open-file limit allows); more are "
                   "refused with an error",
                   check::integer(1, 1000000)});
    config.define({"kvd.max_request_size", "32M",
                   "largest request (all its arguments); a client sending more is cut off",
                   check::size_bytes(1024, uint64_t(1) << 30)});
    config.define({"kvd.pidfile", "", "write the process id here (absolute path); empty: no pidfile",
                   check::absolute_path_or_empty()});
    config.define({"kvd.zero_copy", "yes",
                   "parse requests where they arrived (borrowed receive buffers) and send large GET replies "
                   "from lent send buffers; no: the copying path (input and reply buffers), to compare",
                   check::boolean()});
    config.define({"kvd.daemonize", "no", "detach from the terminal and run in the background", check::boolean()});
}

Settings Settings::from(const twinwire::Config &config)
{
    Settings s;
    s.maxclients = static_cast<size_t>(config.get_int("kvd.maxclients"));
    s.limits.max_request = static_cast<size_t>(config.get_size("kvd.max_request_size"));
    // One reply larger than the connection may queue could never be sent:
    // it is refused while it is built instead.
    s.limits.max_reply = config.write_buffer_limit();
    s.pidfile = config.get("kvd.pidfile");
    s.daemonize = config.get_bool("kvd.daemonize");
    s.zero_copy = config.get_bool("kvd.zero_copy");
    // A value stored must fit in a reply: GET of it would otherwise close
    // the connection for exceeding the output limit.
    if (s.limits.max_request >= config.write_buffer_limit()) {
        const twinwire::ConfigValue *v = config.find("kvd.max_request_size");
        throw twinwire::ConfigError((v ? v->origin : std::string("default")) + ": kvd.max_request_size (" +
                                    config.get("kvd.max_request_size") + ") must be smaller than write_buffer_limit (" +
                                    config.get("write_buffer_limit") + ")");
    }
    return s;
}

} // namespace kvd
