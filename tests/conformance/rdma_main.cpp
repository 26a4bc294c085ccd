// SPDX-License-Identifier: MIT
// conformance-rdma: the conformance cases against the RDMA plugin, inside
// the SoftRoCE guest (SOFTROCE_SERVER_IP / SOFTROCE_CLIENT_IP set by it).
// Exits 77 (skip) with the reason anywhere else.
#include "addresses.hpp"
#include "context.hpp"

#include <twinwire/config.hpp>

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace twinwire::conformance {
namespace {

class RdmaContext : public TransportContext {
public:
    RdmaContext(std::string server_ip, std::string client_ip)
        : server_ip_(std::move(server_ip)), client_ip_(std::move(client_ip))
    {
    }
    std::string name() const override { return "rdma"; }
    sockaddr_storage server_address() const override { return make_address(server_ip_); }
    std::optional<sockaddr_storage> client_source() const override { return make_address(client_ip_); }
    std::optional<sockaddr_storage> silent_address(std::string *why) const override
    {
        // The guest runner names an address nobody answers on, if it has one.
        if (const char *ip = env_or_null("SOFTROCE_SILENT_IP")) return make_address(ip, 9);
        *why = "SOFTROCE_SILENT_IP is not set";
        return std::nullopt;
    }
    std::unique_ptr<Transport> create_transport(std::string *why) override
    {
        // TW_TEST_HOST_TABLE=v1: hand the plugin the host table of ABI 1.0,
        // as an older host would (the growth rules of twinwire/abi.h).
        const char *table = env_or_null("TW_TEST_HOST_TABLE");
        uint32_t host_size = table && std::strcmp(table, "v1") == 0 ? TW_HOST_SIZE_V1 : 0;
        if (host_size) std::fprintf(stderr, "conformance-rdma: host table cut to %u bytes (ABI 1.0)\n", host_size);
        return load_plugin("rdma", Config(), why, host_size);
    }

private:
    std::string server_ip_;
    std::string client_ip_;
};

} // namespace
} // namespace twinwire::conformance

int main(int argc, char **argv)
{
    using namespace twinwire::conformance;
    const char *server_ip = env_or_null("SOFTROCE_SERVER_IP");
    const char *client_ip = env_or_null("SOFTROCE_CLIENT_IP");
    if (!server_ip || !client_ip) {
        fprintf(stderr, "SKIP: not in the SoftRoCE guest (SOFTROCE_SERVER_IP / SOFTROCE_CLIENT_IP not set)\n");
        return 77;
    }
    if (!has_rdma_device()) {
        fprintf(stderr, "SKIP: no RDMA device (/sys/class/infiniband is empty)\n");
        return 77;
    }
    RdmaContext context(server_ip, client_ip);
    return run_cases(argc, argv, context);
}
