// SPDX-License-Identifier: MIT
// Helper processes: each starts fresh (exec), so rdma-core state of the
// parent does not leak in.
#include "rdma_test.hpp"

#include <twinwire/runtime.hpp>

#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace twinwire::rdmatest {

int child_memlock()
{
    // Drop CAP_IPC_LOCK (root's way around the limit), then lower the limit.
    __user_cap_header_struct hdr{};
    __user_cap_data_struct data[2]{};
    hdr.version = _LINUX_CAPABILITY_VERSION_3;
    if (syscall(SYS_capget, &hdr, data) != 0) return 3;
    for (auto &d : data) {
        d.effective &= ~(1u << (CAP_IPC_LOCK % 32));
        d.permitted &= ~(1u << (CAP_IPC_LOCK % 32));
        d.inheritable &= ~(1u << (CAP_IPC_LOCK % 32));
    }
    if (syscall(SYS_capset, &hdr, data) != 0) return 4;
    rlimit rl{64 * 1024, 64 * 1024};
    if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0) return 5;
    std::string why;
    auto t = make_transport({}, &why);
    printf("%s\n", t ? "initialised" : why.c_str());
    return t ? 1 : 0;
}

int child_no_device()
{
    // The loader finds build-tree plugins by this executable's path; name
    // the directory outright, since the mount namespace below may hide it.
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 6;
    exe[n] = '\0';
    std::string dir(exe);
    dir = dir.substr(0, dir.rfind('/')); // build/tests/rdma
    dir = dir.substr(0, dir.rfind('/')); // build/tests
    dir = dir.substr(0, dir.rfind('/')) + "/rdma_plugin";
    setenv("TWINWIRE_PLUGIN_PATH", dir.c_str(), 1);
    // A private mount namespace where the RDMA device nodes and sysfs
    // classes are empty: rdma-core finds no device.
    if (unshare(CLONE_NEWNS) != 0) return 3;
    if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 4;
    for (const char *dir : {"/sys/class/infiniband_verbs", "/sys/class/infiniband", "/dev/infiniband"})
        if (mount("tmpfs", dir, "tmpfs", 0, "") != 0) return 5;
    std::string why;
    auto t = make_transport({}, &why);
    printf("%s\n", t ? "initialised" : why.c_str());
    return t ? 1 : 0;
}

int child_server(bool echo)
{
    // sink: accepts connections that never read (the client fills the ring
    // and waits for credits when the parent kills this process); echo: an
    // echo server with the rdma.* settings given on the command line.  Both
    // close connections that ended.
    using namespace conformance;
    conformance::Env env;
    Server &server = env.listen();
    server.echo = echo;
    if (!echo) server.configure = [](Endpoint &e) { e.auto_read = false; };
    printf("%u\n", port_of(server.address));
    fflush(stdout);
    // Like a daemon, close what ended so its memory serves new connections.
    env.run_until(
        [&] {
            close_finished(env, server, 0);
            return false;
        },
        std::chrono::milliseconds(300000));
    return 0;
}

int child_rma_expose()
{
    // rma-expose: accept one connection, expose 64 MiB for reading and
    // writing, send the descriptor as the stream's first bytes, serve until
    // killed (the killed-peer RMA case).
    using namespace conformance;
    conformance::Env env;
    Server &server = env.listen();
    server.echo = false;
    std::vector<uint8_t> memory(size_t(64) << 20, 0x5a);
    printf("%u\n", port_of(server.address));
    fflush(stdout);
    bool sent = false;
    env.run_until(
        [&] {
            if (sent || server.endpoints.empty() || !server.endpoints[0]->connected) return false;
            Endpoint &e = *server.endpoints[0];
            tw_rma_exposure *x = nullptr;
            uint8_t desc[TW_RMA_DESC_MAX];
            size_t len = 0;
            int rc =
                e.ops().rma_expose(e.conn(), memory.data(), memory.size(), TW_RMA_READ | TW_RMA_WRITE, &x, desc, &len);
            if (rc) {
                fprintf(stderr, "rma_expose: %d %s\n", rc, e.ops().last_error(e.conn()));
                return true;
            }
            e.send(std::string(reinterpret_cast<char *>(desc), len));
            sent = true;
            return false;
        },
        std::chrono::milliseconds(300000));
    return 0;
}

EchoRuntime start_echo_runtime(const std::string &mode, const std::string &ip)
{
    Config c;
    c.set("transport", mode);
    c.set("listen_address", ip);
    c.set("listen_port", "0");
    c.set("threads", "1");
    c.set("log_level", "warn");
    EchoRuntime echo;
    echo.rt = std::make_unique<Runtime>(c);
    echo.rt->start();
    echo.listener = echo.rt->listen(
        {}, [](const ConnectionPtr &conn) { conn->on_data([](Connection &self, Buffer &in) { self.write(in); }); });
    return echo;
}

int child_runtime_echo(const std::string &mode, const std::string &ip)
{
    EchoRuntime echo = start_echo_runtime(mode, ip);
    printf("%u\n", echo.listener->port());
    fflush(stdout);
    echo.rt->run();
    return 0;
}

} // namespace twinwire::rdmatest
