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

TEST_CASE("a device removed under live connections fails them with an error naming the device event; the process "
          "lets go of it, so the deletion finishes within 5 s while it serves on over the other device and TCP; once "
          "the device is added again, its listener takes RDMA connections within 10 s",
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
    Env env(2);
    Server &doomed = env.listen(1, 1);                                    // on the server's device
    Server &other = env.listen(1, 1, make_address(host_text(client_ip))); // on the client's device
    // The fifth accepted connection reads nothing: its bytes wait in the ring.
    std::atomic<int> configured{0};
    doomed.configure = [&](Endpoint &e) {
        if (++configured == 5) {
            e.auto_read = false;
            e.echo = false;
        }
    };
    std::vector<Endpoint *> clients;
    for (int i = 0; i < 5; ++i) {
        Endpoint &c = env.connect(doomed.address, 30000);
        c.send(i < 4 ? "before removal " + std::to_string(i) : std::string("unread when the device went"));
        clients.push_back(&c);
    }
    REQUIRE(env.run_until(
        [&] {
            for (size_t i = 0; i < 4; ++i)
                if (clients[i]->failed() || clients[i]->received.size() < 16) return false;
            return clients[4]->stats().bytes_sent >= 27;
        },
        kFaultBound));
    // Its peer's WRITE landed: what the server side holds unread.
    REQUIRE(env.run_until(
        [&] {
            bool arrived = false;
            env.on_loop(1, [&] {
                for (Endpoint *e : doomed.endpoints)
                    if (!e->auto_read) arrived = e->stats().bytes_received >= 27;
            });
            return arrived;
        },
        kFaultBound));

    // `rdma link delete` returns once every user of the device let go of
    // it: run it beside the loops, never wait on it unbounded.
    auto delete_started = std::chrono::steady_clock::now();
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
            if (e->auto_read) continue;
            // Bytes that arrived before the removal are still read, then the error.
            char buf[64];
            ssize_t n = e->read(buf, sizeof buf);
            CHECK(std::string(buf, n > 0 ? size_t(n) : 0) == "unread when the device went");
            CHECK(e->read(buf, sizeof buf) == -ENODEV);
        }
    });
    // The transport lets go of the device while the accepted connections
    // are still open (the host has not closed them): the deletion finishes.
    bool gone_in_time = env.run_until(deleted, std::chrono::milliseconds(5000));
    auto took =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - delete_started);
    printf("device removal: `rdma link delete %s` %s after %lld ms\n", server_dev,
           gone_in_time ? "finished" : "had not finished", static_cast<long long>(took.count()));
    CHECK(gone_in_time);
    if (gone_in_time) CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    CHECK(transport_description(env).find(std::string("device: ") + server_dev + " removed: released") !=
          std::string::npos);

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

    if (!gone_in_time) {
        // Let the device go before the guest is thrown away.
        for (Endpoint *c : clients) c->close();
        env.on_loop(1, [&] {
            for (Endpoint *e : doomed.endpoints) e->close();
        });
        return;
    }
    // The device comes back (same netdev): the listener on its address
    // listens again, and a new connection uses it.
    std::string netdev = getenv("SOFTROCE_SERVER_NETDEV") ? getenv("SOFTROCE_SERVER_NETDEV") : "";
    REQUIRE_FALSE(netdev.empty());
    REQUIRE(std::system(("rdma link add " + std::string(server_dev) + " type rxe netdev " + netdev).c_str()) == 0);
    auto added = std::chrono::steady_clock::now();
    bool served_again = false;
    int attempts = 0;
    while (!served_again && std::chrono::steady_clock::now() - added < std::chrono::seconds(10)) {
        ++attempts;
        Endpoint *again = nullptr;
        if (env.try_connect(doomed.address, 2000, &again) != 0) {
            env.spin();
            continue;
        }
        again->send("served on the device added again");
        env.run_until([&] { return again->received.size() >= 32 || again->failed(); }, std::chrono::seconds(5));
        served_again = again->received == "served on the device added again";
        again->close();
        if (!served_again) env.run_until([] { return false; }, std::chrono::milliseconds(500));
    }
    auto back_after =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - added).count();
    printf("device removal: RDMA served again %lld ms after `rdma link add` (%d attempts)\n",
           static_cast<long long>(back_after), attempts);
    INFO(transport_description(env));
    CHECK(served_again);
    CHECK(transport_description(env).find(std::string("device: ") + server_dev + " in use") != std::string::npos);
    for (Endpoint *c : clients) c->close();
    env.on_loop(1, [&] {
        for (Endpoint *e : doomed.endpoints) e->close();
    });
}
