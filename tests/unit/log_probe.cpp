// SPDX-License-Identifier: MIT
// Starts a TCP runtime from the environment (TWINWIRE_LOG_IDENT, ...) and
// writes one line at each level to stderr: check_log_format.sh reads them.
#include <twinwire/log.hpp>
#include <twinwire/runtime.hpp>

#include <cstdio>

int main()
{
    try {
        twinwire::Config config;
        config.set("transport", "tcp");
        config.set("log_level", "debug");
        config.load_environment();
        twinwire::Runtime runtime(config);
        runtime.start();
        TW_ERROR("probe", "an error line");
        TW_WARN("probe", "a warning line");
        TW_INFO("probe", "an info line");
        TW_DEBUG("probe", "a debug line");
        std::printf("journal: %s\n", twinwire::log::writing_to_journal() ? "yes" : "no");
    } catch (const twinwire::StartupError &e) {
        std::fprintf(stderr, "log-probe: %s\n", e.what());
        return 1;
    }
}
