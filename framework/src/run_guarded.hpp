// SPDX-License-Identifier: MIT
// Application code run from libevent's C frames (tasks, timers, signal
// handlers): an exception unwinding through them would end the process, so it
// is logged and the loop goes on.  Connections guard their own callbacks.
#pragma once

#include <twinwire/log.hpp>

#include <exception>

namespace twinwire {

template <class F> void run_guarded(const char *what, unsigned loop_index, F &&f)
{
    try {
        f();
    } catch (const std::exception &e) {
        TW_ERROR("loop", "loop %u: a %s threw: %s; the loop goes on", loop_index, what, e.what());
    } catch (...) {
        TW_ERROR("loop", "loop %u: a %s threw an exception that is not a std::exception; the loop goes on", loop_index,
                 what);
    }
}

} // namespace twinwire
