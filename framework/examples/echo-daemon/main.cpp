// echo-daemon [CONFIG-FILE]: echoes over the configured transport until
// SIGTERM or SIGINT. Settings: the file, then TWINWIRE_* variables.
#include "echo_service.hpp"

#include <csignal>
#include <cstdio>
#include <exception>

int main(int argc, char **argv)
{
    try {
        twinwire::Config config;
        if (argc > 1) config.load_file(argv[1]);
        config.load_environment();
        twinwire::Runtime runtime(config);
        runtime.start();
        auto listener = echo::serve(runtime, {});
        runtime.stop_on_signals({SIGTERM, SIGINT});
        runtime.run();
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "echo-daemon: %s\n", e.what());
        return 1;
    }
}
