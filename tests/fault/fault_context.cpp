// SPDX-License-Identifier: MIT
#include "fault_context.hpp"

#include "fault_ctrl.h"

#include <cstdlib>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

using namespace twinwire;
using namespace twinwire::conformance;

namespace fault_test {
namespace {

std::map<std::string, std::string> g_keys;

class FaultContext : public TransportContext {
public:
    std::string name() const override { return "fault"; }
    sockaddr_storage server_address() const override { return make_address("127.0.0.1"); }
    std::optional<sockaddr_storage> silent_address(std::string *why) const override
    {
        *why = "not used by these cases";
        return std::nullopt;
    }
    std::unique_ptr<Transport> create_transport(std::string *why) override
    {
        Config config = fault_config(g_keys);
        PluginLoadReport report;
        std::unique_ptr<PluginLibrary> lib = PluginLibrary::open("fault", config, &report);
        if (!lib) {
            *why = report.reason;
            return nullptr;
        }
        return Transport::from_plugin(std::move(lib), config, why);
    }
};

} // namespace

FaultContext g_context;

Config fault_config(const std::map<std::string, std::string> &keys)
{
    Config config;
    const char *path = std::getenv("TWINWIRE_PLUGIN_PATH");
    if (!path || !*path) throw std::runtime_error("TWINWIRE_PLUGIN_PATH is not set (meson test sets it)");
    config.set("plugin_path", path, "environment");
    config.set("fault.inner", "tcp", "test");
    for (const auto &[k, v] : keys) config.set(k, v, "test");
    return config;
}

void use_fault(const std::map<std::string, std::string> &keys)
{
    release_transport();
    g_keys = keys;
    set_context(&g_context);
}

std::string fault_log(Endpoint &e)
{
    char buf[65536];
    OpGuard guard;
    int n = e.ops().ctrl(transport().handle(), e.conn(), "fault", TW_FAULT_CTRL_LOG, buf, sizeof buf);
    if (n < 0) throw std::runtime_error("TW_FAULT_CTRL_LOG failed: " + std::to_string(n));
    return buf;
}

tw_fault_counts counts(Endpoint &e)
{
    tw_fault_counts out{};
    out.size = sizeof out;
    OpGuard guard;
    int rc = e.ops().ctrl(transport().handle(), e.conn(), "fault", TW_FAULT_CTRL_COUNTS, &out, sizeof out);
    if (rc < 0) throw std::runtime_error("TW_FAULT_CTRL_COUNTS failed: " + std::to_string(rc));
    return out;
}

tw_fault_counts totals()
{
    tw_fault_counts out{};
    out.size = sizeof out;
    int rc = transport().ops().ctrl(transport().handle(), nullptr, "fault", TW_FAULT_CTRL_COUNTS, &out, sizeof out);
    if (rc < 0) throw std::runtime_error("TW_FAULT_CTRL_COUNTS failed: " + std::to_string(rc));
    return out;
}

uint16_t free_port()
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0)
        throw std::runtime_error("cannot find a free port");
    close(fd);
    return ntohs(a.sin_port);
}

} // namespace fault_test

int main(int argc, char **argv)
{
    fault_test::use_fault({});
    return run_cases(argc, argv, fault_test::g_context);
}
