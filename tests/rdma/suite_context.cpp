// SPDX-License-Identifier: MIT
// The transport a suite executable tests (RDMA in the guest, or the
// built-in TCP on the host for the fault cases that apply to both), its
// rdma.* overrides, and the `--child MODE` helper processes.
#include "rdma_test.hpp"

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace twinwire::rdmatest {
namespace {

using conformance::env_or_null;
using conformance::has_rdma_device;

std::map<std::string, std::string> g_settings;

class SuiteContext : public conformance::TransportContext {
public:
    SuiteContext(bool tcp, std::string server_ip, std::string client_ip)
        : tcp_(tcp), server_ip_(std::move(server_ip)), client_ip_(std::move(client_ip))
    {
    }
    std::string name() const override { return tcp_ ? "tcp" : "rdma"; }
    sockaddr_storage server_address() const override { return conformance::make_address(server_ip_); }
    std::optional<sockaddr_storage> client_source() const override { return conformance::make_address(client_ip_); }
    std::optional<sockaddr_storage> silent_address(std::string *why) const override
    {
        *why = "not used by the RDMA suites";
        return std::nullopt;
    }
    std::unique_ptr<Transport> create_transport(std::string *why) override
    {
        if (!tcp_) return make_transport(g_settings, why);
        try {
            return Transport::builtin_tcp(Config());
        } catch (const std::exception &e) {
            *why = e.what();
            return nullptr;
        }
    }

private:
    bool tcp_;
    std::string server_ip_;
    std::string client_ip_;
};

std::unique_ptr<SuiteContext> g_context;

} // namespace

void use_settings(const std::map<std::string, std::string> &settings)
{
    conformance::release_transport();
    g_settings = settings;
}

bool testing_tcp() { return conformance::context().name() == "tcp"; }

int run_child_mode(int argc, char **argv)
{
    std::string mode = argv[2];
    if (mode == "memlock") return child_memlock();
    if (mode == "nodevice") return child_no_device();
    if ((mode == "rma-bench-server" && argc >= 4) || (mode == "rma-bench-client" && argc >= 9)) {
        bool server = mode == "rma-bench-server";
        SuiteContext context(false, argv[3], server ? argv[3] : argv[4]);
        conformance::set_context(&context);
        int rc = server ? child_rma_bench_server() : child_rma_bench_client(argc, argv);
        conformance::release_transport();
        return rc;
    }
    if ((mode == "lat-bench-server" && argc >= 4) || (mode == "lat-bench-client" && argc >= 8)) {
        // A last argument "tcp": the built-in TCP instead (the host's check of the tool).
        bool server = mode == "lat-bench-server";
        bool tcp = std::strcmp(argv[argc - 1], "tcp") == 0 && argc >= (server ? 5 : 9);
        SuiteContext context(tcp, argv[3], server ? argv[3] : argv[4]);
        conformance::set_context(&context);
        int rc = server ? child_lat_bench_server() : child_lat_bench_client(argc, argv);
        conformance::release_transport();
        return rc;
    }
    if (mode == "idle-bench" && argc >= 9) {
        SuiteContext context(false, argv[3], argv[4]);
        conformance::set_context(&context);
        int rc = child_idle_bench(argc, argv);
        conformance::release_transport();
        return rc;
    }
    if (mode == "rma-expose" && argc >= 4) {
        SuiteContext context(false, argv[3], argv[3]);
        conformance::set_context(&context);
        int rc = child_rma_expose();
        conformance::release_transport();
        return rc;
    }
    if (mode == "runtime-echo" && argc >= 5) return child_runtime_echo(argv[3], argv[4]);
    if ((mode == "sink" || mode == "echo") && argc >= 4) {
        // Further arguments: "tcp" (the built-in TCP instead of RDMA) and
        // rdma.key=value settings for this server.
        bool tcp = false;
        std::map<std::string, std::string> settings;
        for (int i = 4; i < argc; ++i) {
            std::string kv = argv[i];
            size_t eq = kv.find('=');
            if (kv == "tcp") tcp = true;
            else if (eq != std::string::npos) settings[kv.substr(0, eq)] = kv.substr(eq + 1);
        }
        use_settings(settings);
        SuiteContext context(tcp, argv[3], argv[3]);
        conformance::set_context(&context);
        int rc = child_server(mode == "echo");
        conformance::release_transport();
        return rc;
    }
    fprintf(stderr, "unknown child mode %s\n", mode.c_str());
    return 2;
}

int run_suite(int argc, char **argv)
{
    setvbuf(stdout, nullptr, _IOLBF, 0); // summaries reach the log even when a case hangs
    if (argc >= 3 && std::strcmp(argv[1], "--child") == 0) return run_child_mode(argc, argv);
    std::vector<char *> args;
    bool one_device = false, tcp = false;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--one-device") == 0) one_device = true;
        else if (std::strcmp(argv[i], "--tcp") == 0) tcp = true;
        else args.push_back(argv[i]);
    }
    if (tcp) {
        fprintf(stderr, "%s: over the built-in TCP on 127.0.0.1\n", argv[0]);
        g_context = std::make_unique<SuiteContext>(true, "127.0.0.1", "127.0.0.1");
        return conformance::run_cases(static_cast<int>(args.size()), args.data(), *g_context);
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
    std::string server = one_device ? client_ip : server_ip;
    fprintf(stderr, "%s: server %s, client %s (%s)\n", argv[0], server.c_str(), client_ip,
            one_device ? "one device" : "across the wire");
    g_context = std::make_unique<SuiteContext>(false, server, client_ip);
    return conformance::run_cases(static_cast<int>(args.size()), args.data(), *g_context);
}

} // namespace twinwire::rdmatest
