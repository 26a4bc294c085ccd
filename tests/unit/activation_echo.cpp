// SPDX-License-Identifier: MIT
// The daemon side of the socket-activation test: a TCP-transport echo
// server that listens with the sockets its parent passed (LISTEN_FDS), the
// one named argv[1] ("" = the first).  Prints "<address> LISTEN_FDS=<value
// left in its environment, or ->" once listening, then serves until SIGTERM.
#include <twinwire/runtime.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv)
{
    twinwire::Config config;
    config.set("transport", "tcp");
    config.set("log_level", "warn");
    twinwire::Runtime rt(config);
    try {
        rt.start();
        twinwire::ListenOptions options;
        options.fd_name = argc > 1 ? argv[1] : "";
        auto listener = rt.listen(options, [](const twinwire::ConnectionPtr &c) {
            c->on_data([](twinwire::Connection &conn, twinwire::Buffer &in) { conn.write(in); });
        });
        const char *left = std::getenv("LISTEN_FDS");
        std::printf("%s LISTEN_FDS=%s\n", listener->address().c_str(), left ? left : "-");
        std::fflush(stdout);
        rt.stop_on_signals({SIGTERM});
        rt.run();
    } catch (const std::exception &e) {
        std::printf("error: %s\n", e.what());
        return 1;
    }
    return 0;
}
