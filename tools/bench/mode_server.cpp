// SPDX-License-Identifier: MIT
#include "bench_server.hpp"
#include "modes.hpp"
#include "runtime_setup.hpp"

#include <csignal>
#include <cstdio>

namespace twinwire::bench {

int run_server(const ServerOptions &options)
{
    Runtime rt(make_config(options.runtime));
    rt.start();
    ListenOptions listen;
    listen.address = options.listen;
    listen.port = options.port;
    auto listener = rt.listen(listen, [](const ConnectionPtr &c) { serve_bench_connection(c); });
    std::string over;
    for (const std::string &t : listener->transports()) over += (over.empty() ? "" : "+") + t;
    std::fprintf(stderr, "twinwire-bench server: %s\n", describe_transport(rt).c_str());
    // Scripts read the port from this line (useful with --port 0).
    std::printf("listening on %s:%u over %s\n", listener->address().c_str(), listener->port(), over.c_str());
    std::fflush(stdout);
    rt.stop_on_signals({SIGINT, SIGTERM});
    rt.run();
    return 0;
}

} // namespace twinwire::bench
