// SPDX-License-Identifier: MIT
// twinwire-bench: latency, throughput and RESP load over the twinwire
// framework's public API, so that it measures what a daemon gets.
#include "args.hpp"
#include "modes.hpp"

#include <twinwire/config.hpp>
#include <twinwire/runtime.hpp>

#include <cstdio>
#include <exception>

using namespace twinwire::bench;

int main(int argc, char **argv)
{
    Invocation inv;
    try {
        inv = parse_args(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const ArgError &e) {
        std::fprintf(stderr, "twinwire-bench: %s\n(see twinwire-bench --help)\n", e.what());
        return 2;
    }
    try {
        switch (inv.mode) {
        case Mode::Help:
            std::fputs(inv.text.c_str(), stdout);
            return 0;
        case Mode::Server:
            return run_server(inv.server);
        case Mode::Client:
            return run_client(inv.client);
        case Mode::Local:
            return run_local(inv.local);
        case Mode::Resp:
            return run_resp(inv.resp);
        case Mode::Rma:
            return run_rma(inv.rma);
        }
    } catch (const twinwire::ConfigError &e) {
        std::fprintf(stderr, "twinwire-bench: configuration: %s\n", e.what());
        return 2;
    } catch (const twinwire::StartupError &e) {
        std::fprintf(stderr, "twinwire-bench: cannot start: %s\n", e.what());
        return 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "twinwire-bench: %s\n", e.what());
        return 1;
    }
    return 1;
}
