// SPDX-License-Identifier: MIT
// Fault matrix: an RDMA device deleted (`rdma link delete`) while
// connections on it are live.  Across the wire only (it needs a second
// device to survive), and last: it changes the guest's links.
#include "fault.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

using namespace twinwire;
using namespace twinwire::conformance;
using namespace twinwire::rdmatest;

namespace {

/// Every accepted endpoint of `server` (on `loop`) satisfies `pred`.
bool all_accepted(Env &env, Server &server, unsigned loop, const std::function<bool(Endpoint &)> &pred)
{
    bool all = true;
    env.on_loop(loop, [&] {
        for (Endpoint *e : server.endpoints) all = all && pred(*e);
    });
    return all;
}

/// Start `argv` with its output discarded; its pid.
pid_t spawn_quiet(const std::vector<std::string> &argv)
{
    pid_t pid = fork();
    if (pid == 0) {
        std::vector<char *> args;
        for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
        args.push_back(nullptr);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 1);
        dup2(null, 2);
        execvp(args[0], args.data());
        _exit(127);
    }
    return pid;
}

/// An echo over TCP through a Runtime in this very process.
std::string tcp_echo_in_process(const std::string &text)
{
    EchoRuntime echo = start_echo_runtime("tcp", "127.0.0.1");
    std::thread loop([&] { echo.rt->run(); });
    std::string got;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(echo.listener->port());
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof to) == 0 &&
        write(fd, text.data(), text.size()) == ssize_t(text.size())) {
        char buf[256];
        ssize_t n;
        while (got.size() < text.size() && (n = read(fd, buf, sizeof buf)) > 0) got.append(buf, size_t(n));
    }
    close(fd);
    echo.rt->stop(false);
    loop.join();
    return got;
}

} // namespace

TEST_CASE("a device removed under live connections fails them with an error naming the device event; nothing "
          "hangs, and the process serves on over the other device and over TCP",
          "[fault][removal][links]")
{
    const char *server_dev = getenv("SOFTROCE_SERVER_DEV");
    REQUIRE(server_dev);
    sockaddr_storage client_ip = *context().client_source();
    REQUIRE_FALSE(same_host(context().server_address(), client_ip)); // two devices: across the wire
    use_fault_settings();
    pid_t remover = 0;
    int status = -1;
    auto deleted = [&] { return waitpid(remover, &status, WNOHANG) == remover; };
    std::string stage = "never while the process lived";
    {
        Env env(2);
        Server &doomed = env.listen(1, 1);                                    // on the server's device
        Server &other = env.listen(1, 1, make_address(host_text(client_ip))); // on the client's device
        std::vector<Endpoint *> clients;
        for (int i = 0; i < 4; ++i) {
            Endpoint &c = env.connect(doomed.address, 30000);
            c.send("before removal " + std::to_string(i));
            clients.push_back(&c);
        }
        REQUIRE(env.run_until(
            [&] {
                for (Endpoint *c : clients)
                    if (c->failed() || c->received.size() < 16) return false;
                return true;
            },
            kFaultBound));

        // `rdma link delete` returns once every user of the device let go
        // of it: run it beside the loops, never wait on it unbounded.
        remover = spawn_quiet({"rdma", "link", "delete", server_dev});
        REQUIRE(remover > 0);
        bool server_side_failed = env.run_until(
            [&] { return all_accepted(env, doomed, 1, [](Endpoint &e) { return e.failed(); }); }, kFaultBound);
        CHECK(server_side_failed);
        env.on_loop(1, [&] {
            for (Endpoint *e : doomed.endpoints) {
                INFO("accepted: " << e->describe());
                CHECK(e->error_code == -ENODEV);
                CHECK(e->last_error.find("DEVICE_REMOVAL") != std::string::npos);
            }
        });
        // Their peers learn it from the wire (reset, retries exhausted, or silence).
        bool clients_failed = env.run_until(
            [&] {
                for (Endpoint *c : clients)
                    if (!c->failed()) return false;
                return true;
            },
            kFaultBound);
        CHECK(clients_failed);
        for (Endpoint *c : clients) {
            INFO("client: " << c->describe());
            CHECK(c->error_code < 0);
            CHECK_FALSE(c->last_error.empty());
        }

        // The other device still serves...
        Endpoint &fresh = env.connect(other.address, 30000);
        fresh.send("served on the other device");
        REQUIRE(env.run_until([&] { return fresh.received.size() >= 26 || fresh.failed(); }, kFaultBound));
        CHECK(fresh.received == "served on the other device");
        // ...and so does TCP, in the same process.
        CHECK(tcp_echo_in_process("served over TCP") == "served over TCP");
        if (env.run_until(deleted, std::chrono::milliseconds(5000))) stage = "while connections were open";
        for (Endpoint *c : clients) c->close();
        env.on_loop(1, [&] {
            for (Endpoint *e : doomed.endpoints) e->close();
        });
        if (stage[0] == 'n' && env.run_until(deleted, std::chrono::milliseconds(2000)))
            stage = "once the failed connections were closed";
    }
    // The loops are gone (their CQs and registered pools with them).
    auto wait_deleted = [&](const char *when) {
        for (int i = 0; i < 20 && stage[0] == 'n'; ++i) {
            if (deleted()) stage = when;
            else usleep(100000);
        }
    };
    wait_deleted("once the loops were detached");
    conformance::release_transport();
    wait_deleted("once the transport was finalised");
    // Known limit (docs/rdma-design.md, "Fault matrix"): on rxe the
    // kernel finishes the deletion only when the process has closed the
    // device, which today happens at exit, not when the transport lets go.
    // Reported, not asserted: the process itself never waited on it.
    printf("device removal: `rdma link delete %s` finished %s\n", server_dev, stage.c_str());
    if (stage[0] != 'n') CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    // The guest is thrown away after this case; the device stays removed.
}
