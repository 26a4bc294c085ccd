// SPDX-License-Identifier: MIT
// A TCP server out of file descriptors (issue 11 item 1): it must neither
// spin nor flood the log, clients it cannot take must be told (a close), and
// it must serve again by itself once descriptors are free.  The server is
// this process with a low RLIMIT_NOFILE; the clients are a forked child.
#include "log_capture.hpp"
#include "socket_client.hpp"
#include "tcp_config.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

struct ClientReport {
    int served = 0;       ///< got their bytes echoed
    int turned_away = 0;  ///< saw a close or a reset
    int hanging = 0;      ///< neither within the bound
    int served_after = 0; ///< a client after fds were freed got its echo
};

constexpr int kClients = 40;
constexpr int kSpareFds = 12; // descriptors the server has left for clients
constexpr int kReplyBoundMs = 5000;

/// The RLIMIT_NOFILE that leaves exactly `spare` descriptor numbers free
/// (new descriptors take the lowest free number below the limit).
rlim_t limit_leaving(int spare)
{
    std::set<int> open;
    if (DIR *d = opendir("/proc/self/fd")) {
        while (struct dirent *e = readdir(d))
            if (e->d_name[0] != '.') open.insert(atoi(e->d_name));
        closedir(d); // its own descriptor was counted: one more free after this
    }
    int fd = 0;
    for (int free_seen = 0; free_seen <= spare; ++fd)
        if (!open.count(fd)) ++free_seen;
    return static_cast<rlim_t>(fd - 1);
}

/// 1: echoed, 0: closed or reset, -1: nothing within the bound.
int await_echo(int fd, const char *sent, int bound_ms)
{
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, bound_ms) <= 0) return -1;
    char buf[16];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    return n == static_cast<ssize_t>(strlen(sent)) && memcmp(buf, sent, n) == 0 ? 1 : 0;
}

ClientReport run_clients(uint16_t port)
{
    ClientReport r;
    std::vector<int> served;
    std::vector<int> fds;
    for (int i = 0; i < kClients; ++i) {
        int fd = connect_loopback(port);
        if (fd >= 0 && send(fd, "ping", 4, MSG_NOSIGNAL) != 4) {
            ::close(fd);
            fd = -1;
        }
        fds.push_back(fd);
    }
    for (int fd : fds) {
        int got = fd < 0 ? 0 : await_echo(fd, "ping", kReplyBoundMs);
        if (got == 1) served.push_back(fd);
        else if (fd >= 0) ::close(fd);
        (got == 1 ? r.served : got == 0 ? r.turned_away : r.hanging)++;
    }
    for (int fd : served) ::close(fd);
    // The server closes its ends on our close; then it must take new clients.
    for (int attempt = 0; attempt < 30 && !r.served_after; ++attempt) {
        std::this_thread::sleep_for(200ms);
        int fd = connect_loopback(port);
        if (fd < 0) continue;
        if (send(fd, "pong", 4, MSG_NOSIGNAL) == 4 && await_echo(fd, "pong", kReplyBoundMs) == 1) r.served_after = 1;
        ::close(fd);
    }
    return r;
}

double cpu_seconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct FdLimit {
    rlimit saved{};
    explicit FdLimit(rlim_t soft)
    {
        getrlimit(RLIMIT_NOFILE, &saved);
        rlimit low = saved;
        low.rlim_cur = soft;
        setrlimit(RLIMIT_NOFILE, &low);
    }
    ~FdLimit() { setrlimit(RLIMIT_NOFILE, &saved); }
};

} // namespace

TEST_CASE("a TCP server out of file descriptors closes the clients it cannot take, neither spins nor floods the "
          "log, and serves again once descriptors are free",
          "[runtime][limits]")
{
    LogCapture logs;
    Runtime rt(tcp_config(1));
    rt.start();
    auto listener =
        rt.listen({}, [](const ConnectionPtr &c) { c->on_data([](Connection &conn, Buffer &in) { conn.write(in); }); });
    const uint16_t port = listener->port();

    int report_pipe[2];
    REQUIRE(pipe2(report_pipe, O_CLOEXEC) == 0);
    rlimit original{};
    getrlimit(RLIMIT_NOFILE, &original);
    const rlim_t fd_limit = limit_leaving(kSpareFds);
    FdLimit limit(fd_limit);
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        setrlimit(RLIMIT_NOFILE, &original);
        ClientReport r = run_clients(port);
        ssize_t n = write(report_pipe[1], &r, sizeof r);
        _exit(n == sizeof r ? 0 : 1);
    }
    ::close(report_pipe[1]);

    ClientReport report;
    bool got_report = false;
    const double cpu_before = cpu_seconds();
    Timer poll_child(rt.loop(0), [&] {
        pollfd p{report_pipe[0], POLLIN, 0};
        if (poll(&p, 1, 0) <= 0) return;
        got_report = read(report_pipe[0], &report, sizeof report) == sizeof report;
        rt.stop(false);
    });
    poll_child.start(20ms, 20ms);
    Timer watchdog(rt.loop(0), [&] { rt.stop(false); });
    watchdog.start(120s);
    rt.run();
    const double cpu_used = cpu_seconds() - cpu_before;
    ::close(report_pipe[0]);
    int status = 0;
    if (!got_report) kill(child, SIGKILL);
    waitpid(child, &status, 0);

    size_t accept_warnings = 0;
    for (const auto &line : logs.from("listen"))
        if (line.text.find("accept on") != std::string::npos) ++accept_warnings;
    INFO("RLIMIT_NOFILE " << fd_limit << "; served " << report.served << ", turned away " << report.turned_away
                          << ", hanging " << report.hanging << "; accept warnings " << accept_warnings
                          << "; server CPU " << cpu_used << " s");
    REQUIRE(got_report);
    CHECK(report.served >= 1);
    CHECK(report.turned_away >= kClients - kSpareFds - 4); // the limit bit (a few descriptors more or less)
    CHECK(report.hanging == 0);
    CHECK(report.served + report.turned_away == kClients);
    CHECK(report.served_after == 1);
    CHECK(accept_warnings >= 1);
    CHECK(accept_warnings <= 12);
    // A spinning loop burns a core for the whole exchange (several seconds).
    CHECK(cpu_used < 1.0);
}
