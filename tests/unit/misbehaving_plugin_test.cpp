// SPDX-License-Identifier: MIT
// Plugins that misbehave (issue 11 item 8): the host reads nothing past a
// reason buffer left without a NUL, says what a "successful" init without a
// transport is, and leaves a line naming the file when a plugin crashes.
#include "log_capture.hpp"

#include <twinwire/transport.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

using namespace twinwire;

namespace {

std::string variant(const char *name)
{
    const char *v = std::getenv((std::string("TW_TEST_PLUGIN_") + name).c_str());
    if (!v) FAIL("the test runner must set TW_TEST_PLUGIN_" << name);
    return v;
}

Config rdma_from(const std::string &path)
{
    Config c;
    c.set("transport", "rdma");
    c.set("plugin_path", path);
    return c;
}

std::string refusal(const std::string &path)
{
    try {
        (void)select_transports(rdma_from(path));
    } catch (const std::runtime_error &e) {
        return e.what();
    }
    return "(no error)";
}

struct ChildResult {
    int signal = 0; ///< the signal that ended it, 0 when it exited
    std::string stderr_text;
};

// Select the plugin at `path` in a child whose stderr is captured.
ChildResult select_in_child(const std::string &path)
{
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        signal(SIGSEGV, SIG_DFL); // die of it, not through the test framework's handler
        close(fds[0]);
        log::set_level(LogLevel::Info);
        try {
            (void)select_transports(rdma_from(path));
        } catch (...) {
        }
        _exit(0);
    }
    close(fds[1]);
    ChildResult r;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) r.stderr_text.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    return r;
}

} // namespace

TEST_CASE("a refusal reason without a NUL is cut at the buffer's end, never read past it", "[misbehaving]")
{
    std::string e = refusal(variant("REASON_NO_NUL"));
    INFO(e);
    // The host's buffer is 512 bytes: 511 of the plugin's, then the NUL the host wrote.
    const std::string expected = "RDMA plugin refused: " + std::string(511, 'x') + " (";
    CHECK(e.find(expected) != std::string::npos);
    CHECK(e.find(std::string(512, 'x')) == std::string::npos);
}

TEST_CASE("init returning success without a transport reads as such, not as a failure with Success", "[misbehaving]")
{
    std::string e = refusal(variant("INIT_NO_HANDLE"));
    CHECK(e.find("RDMA plugin refused: init reported success but returned no transport") != std::string::npos);
    CHECK(e.find("Success") == std::string::npos);
}

TEST_CASE("a plugin that crashes in its entry point leaves a line naming the file being loaded", "[misbehaving]")
{
    const std::string path = variant("CRASH_IN_ENTRY");
    ChildResult r = select_in_child(path);
    INFO(r.stderr_text);
    CHECK(r.signal == SIGSEGV);
    CHECK(r.stderr_text.find("[loader] loading plugin " + path + "\n") != std::string::npos);
}

TEST_CASE("a plugin that crashes in its init leaves a line naming the transport and file", "[misbehaving]")
{
    const std::string path = variant("CRASH_IN_INIT");
    ChildResult r = select_in_child(path);
    INFO(r.stderr_text);
    CHECK(r.signal == SIGSEGV);
    CHECK(r.stderr_text.find("[loader] initialising transport rdma (" + path + ")\n") != std::string::npos);
}
