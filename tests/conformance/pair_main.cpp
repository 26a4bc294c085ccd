// SPDX-License-Identifier: MIT
// conformance-pair: the conformance cases against the in-memory pair
// plugin (tools/transports/pair), loaded by name from the plugin path like
// any plugin, plus pair's own cases (pair_cases.cpp).
#include "addresses.hpp"
#include "context.hpp"

#include <twinwire/config.hpp>

namespace twinwire::conformance {
namespace {

class PairContext : public TransportContext {
public:
    std::string name() const override { return "pair"; }
    sockaddr_storage server_address() const override { return make_address("127.0.0.1"); }
    std::optional<sockaddr_storage> server_address_v6() const override { return make_address("::1"); }
    std::optional<sockaddr_storage> silent_address(std::string *why) const override
    {
        *why = "pair decides every connect at once, accepted or refused: no address leaves one unanswered";
        return std::nullopt;
    }
    std::unique_ptr<Transport> create_transport(std::string *why) override
    {
        return load_plugin("pair", Config(), why);
    }
};

} // namespace
} // namespace twinwire::conformance

int main(int argc, char **argv)
{
    twinwire::conformance::PairContext context;
    return twinwire::conformance::run_cases(argc, argv, context);
}
