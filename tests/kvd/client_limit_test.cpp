// SPDX-License-Identifier: MIT
// kvd.maxclients against the open-file limit, in a child process (the
// limits it sets cannot be undone in the test process itself).
#include "client_limit.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

struct Outcome {
    size_t maxclients = 0;
    rlim_t soft_after = 0;
    std::string notice;
};

/// In a child with RLIMIT_NOFILE = soft/hard: fit `wanted` beside `reserved`.
Outcome fit_in_child(rlim_t soft, rlim_t hard, size_t wanted, size_t reserved)
{
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        struct rlimit lim {soft, hard};
        if (setrlimit(RLIMIT_NOFILE, &lim) != 0) _exit(2);
        kvd::ClientLimit fit = kvd::fit_clients_to_fd_limit(wanted, reserved);
        getrlimit(RLIMIT_NOFILE, &lim);
        std::string text = std::to_string(fit.maxclients) + " " + std::to_string(lim.rlim_cur) + " " + fit.notice;
        ssize_t n = write(fds[1], text.data(), text.size());
        _exit(n == static_cast<ssize_t>(text.size()) ? 0 : 3);
    }
    close(fds[1]);
    std::string text;
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    Outcome out;
    size_t a = text.find(' '), b = text.find(' ', a + 1);
    out.maxclients = std::stoul(text.substr(0, a));
    out.soft_after = std::stoul(text.substr(a + 1, b - a - 1));
    out.notice = text.substr(b + 1);
    return out;
}

} // namespace

TEST_CASE("maxclients is lowered to what a low open-file limit leaves, saying why", "[kvd][limits]")
{
    Outcome o = fit_in_child(100, 100, 10000, 36);
    CHECK(o.maxclients == 64);
    CHECK(o.notice.find("kvd.maxclients lowered from 10000 to 64: the open file limit is 100 (hard limit 100)") == 0);
}

TEST_CASE("the soft open-file limit is raised towards maxclients when the hard limit allows", "[kvd][limits]")
{
    Outcome o = fit_in_child(50, 400, 100, 36);
    CHECK(o.maxclients == 100);
    CHECK(o.soft_after == 136);
    CHECK(o.notice.empty());
}

TEST_CASE("a limit that leaves no descriptor for a client fits none", "[kvd][limits]")
{
    Outcome o = fit_in_child(30, 30, 10, 36);
    CHECK(o.maxclients == 0);
    CHECK_FALSE(o.notice.empty());
}
