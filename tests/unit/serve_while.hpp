// SPDX-License-Identifier: MIT
// Serving a runtime on the test's thread while a client runs on another.
#pragma once

#include <twinwire/loop.hpp>
#include <twinwire/runtime.hpp>

#include <chrono>
#include <thread>

namespace twtest {

/// Runs `client` on its own thread while `rt` serves on this one, then stops
/// the runtime; a 30 s watchdog stops it too, so a hung case fails instead of
/// hanging the suite.
template <class F> void serve_while(twinwire::Runtime &rt, F client)
{
    std::thread t([&] {
        client();
        rt.stop(false);
    });
    twinwire::Timer watchdog(rt.loop(0), [&] { rt.stop(false); });
    watchdog.start(std::chrono::seconds(30));
    rt.run();
    t.join();
}

} // namespace twtest
