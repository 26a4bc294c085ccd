// SPDX-License-Identifier: MIT
// rdma-tests: the RDMA-specific cases, on real verbs in the SoftRoCE guest.
// Across the wire by default (client binds SOFTROCE_CLIENT_IP, server on
// SOFTROCE_SERVER_IP); --one-device runs both ends on the client's device.
// Exits 77 with the reason outside a guest.  `--child MODE` is this
// executable re-run as a helper process by some cases.
#include "rdma_test.hpp"

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace twinwire::rdmatest {
namespace {

std::map<std::string, std::string> g_settings;

class RdmaTestContext : public conformance::TransportContext {
public:
    RdmaTestContext(std::string server_ip, std::string client_ip)
        : server_ip_(std::move(server_ip)), client_ip_(std::move(client_ip))
    {
    }
    std::string name() const override { return "rdma"; }
    sockaddr_storage server_address() const override { return conformance::make_address(server_ip_); }
    std::optional<sockaddr_storage> client_source() const override { return conformance::make_address(client_ip_); }
    std::optional<sockaddr_storage> silent_address(std::string *why) const override
    {
        *why = "not used by the RDMA suite";
        return std::nullopt;
    }
    std::unique_ptr<Transport> create_transport(std::string *why) override { return make_transport(g_settings, why); }

private:
    std::string server_ip_;
    std::string client_ip_;
};

const char *env_or_null(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : nullptr;
}

bool has_rdma_device()
{
    DIR *dir = opendir("/sys/class/infiniband");
    if (!dir) return false;
    bool found = false;
    while (dirent *entry = readdir(dir))
        if (entry->d_name[0] != '.') found = true;
    closedir(dir);
    return found;
}

} // namespace

void use_settings(const std::map<std::string, std::string> &settings)
{
    conformance::release_transport();
    g_settings = settings;
}

} // namespace twinwire::rdmatest

int main(int argc, char **argv)
{
    using namespace twinwire::rdmatest;
    if (argc >= 3 && std::strcmp(argv[1], "--child") == 0) {
        std::string mode = argv[2];
        if (mode == "memlock") return child_memlock();
        if (mode == "nodevice") return child_no_device();
        if (mode == "runtime-echo" && argc >= 5) return child_runtime_echo(argv[3], argv[4]);
        if ((mode == "sink" || mode == "echo") && argc >= 4) {
            // Further arguments: rdma.key=value settings for this server.
            std::map<std::string, std::string> settings;
            for (int i = 4; i < argc; ++i) {
                std::string kv = argv[i];
                size_t eq = kv.find('=');
                if (eq != std::string::npos) settings[kv.substr(0, eq)] = kv.substr(eq + 1);
            }
            use_settings(settings);
            RdmaTestContext context(argv[3], argv[3]);
            twinwire::conformance::set_context(&context);
            int rc = child_server(mode == "echo");
            twinwire::conformance::release_transport();
            return rc;
        }
        fprintf(stderr, "unknown child mode %s\n", mode.c_str());
        return 2;
    }
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
    std::vector<char *> args;
    bool one_device = false;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--one-device") == 0) one_device = true;
        else args.push_back(argv[i]);
    }
    std::string server = one_device ? client_ip : server_ip;
    fprintf(stderr, "rdma-tests: server %s, client %s (%s)\n", server.c_str(), client_ip,
            one_device ? "one device" : "across the wire");
    RdmaTestContext context(server, client_ip);
    return twinwire::conformance::run_cases(static_cast<int>(args.size()), args.data(), context);
}
