// SPDX-License-Identifier: MIT
// Runs a function in a forked child and returns the text it produced: for
// tests that change what cannot be undone in the test process (rlimits,
// the user id).
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace twtest {

/// Forks, runs `fn` in the child and returns its string through a pipe.
/// The child exits 0 when the whole string was written; the test fails on
/// any other exit (`fn` may _exit with its own code to report a set-up
/// failure).
template <typename Fn> std::string output_of_child(Fn fn)
{
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        std::string text = fn();
        ssize_t n = write(fds[1], text.data(), text.size());
        _exit(n == static_cast<ssize_t>(text.size()) ? 0 : 120);
    }
    close(fds[1]);
    std::string text;
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    INFO("child's output: " << text);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return text;
}

} // namespace twtest
