// SPDX-License-Identifier: MIT
// conformance-tcp: the conformance cases against the built-in TCP backend.
//
//   conformance-tcp [catch2 options]          cases on the host's loopback
//   conformance-tcp --netns [catch2 options]  inside a private network
//       namespace that has an address which never answers (for "[silent]");
//       exits 77 (skip) when the namespace cannot be made.
#include "addresses.hpp"
#include "context.hpp"
#include "netns.hpp"

#include <twinwire/config.hpp>
#include <tw_socket_backend.h>

#include <cstdio>
#include <cstring>
#include <exception>

namespace twinwire::conformance {
namespace {

class TcpContext : public TransportContext {
public:
    explicit TcpContext(bool silent_netns) : silent_netns_(silent_netns) {}
    std::string name() const override { return "tcp"; }
    sockaddr_storage server_address() const override { return make_address("127.0.0.1"); }
    std::optional<sockaddr_storage> server_address_v6() const override { return make_address("::1"); }
    std::optional<sockaddr_storage> client_source() const override { return make_address("127.0.0.1"); }
    std::optional<sockaddr_storage> silent_address(std::string *why) const override
    {
        if (silent_netns_) return make_address(kSilentAddress, 9);
        *why = "only inside the private network namespace: run conformance-tcp --netns";
        return std::nullopt;
    }
    std::unique_ptr<Transport> create_transport(std::string *why) override
    {
        try {
            return Transport::builtin_tcp(Config());
        } catch (const std::exception &e) {
            *why = e.what();
            return nullptr;
        }
    }

    const tw_transport_ops *own_ops(const Transport &) const override
    {
        return tw_socket_backend_entry(TW_ABI_MAJOR, TW_ABI_MINOR)->ops;
    }

private:
    bool silent_netns_;
};

} // namespace
} // namespace twinwire::conformance

int main(int argc, char **argv)
{
    using namespace twinwire::conformance;
    bool netns = argc > 1 && strcmp(argv[1], "--netns") == 0;
    if (netns) {
        std::string why;
        if (!enter_silent_netns(&why)) {
            fprintf(stderr, "SKIP: cannot make a private network namespace: %s\n", why.c_str());
            return 77;
        }
        argv[1] = argv[0];
        argc--;
        argv++;
    }
    TcpContext context(netns);
    return run_cases(argc, argv, context);
}
