// SPDX-License-Identifier: MIT
// Unix-domain sockets in the TCP backend (unix:/path, unix:@name, socket
// file permissions, stale files) and systemd socket activation (a program
// started with listening sockets on fd 3 and 4 and LISTEN_* set).
#include "tcp_config.hpp"

#include <twinwire/runtime.hpp>

#include "serve_while.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

using namespace twinwire;
using twtest::serve_while;
using namespace std::chrono_literals;

namespace {

struct TempDir {
    std::string path;
    TempDir()
    {
        char tmpl[] = "/tmp/twinwire-unix-XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~TempDir() { std::system(("rm -rf " + path).c_str()); }
};

sockaddr_un unix_address(const std::string &path, socklen_t *len)
{
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    bool abstract = path[0] == '@';
    memcpy(a.sun_path, path.data(), path.size());
    if (abstract) a.sun_path[0] = '\0';
    *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (abstract ? 0 : 1));
    return a;
}

/// A blocking Unix stream socket connected to `path` ("@name": abstract), or -1.
int connect_unix(const std::string &path)
{
    socklen_t len;
    sockaddr_un a = unix_address(path, &len);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&a), len) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
}

/// A bound, listening Unix socket at `path`, or -1.
int listen_unix(const std::string &path)
{
    socklen_t len;
    sockaddr_un a = unix_address(path, &len);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr *>(&a), len) == 0 && listen(fd, 16) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
}

/// Send `text` on `fd`, return what comes back within a second.
std::string exchange(int fd, const std::string &text)
{
    if (fd < 0 || send(fd, text.data(), text.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(text.size())) return {};
    std::string got;
    while (got.size() < text.size()) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 1000) <= 0) break;
        char buf[256];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
    }
    return got;
}

/// Serve on rt's loop while `client` runs on a thread.
AcceptHandler echo(std::string *peer = nullptr, std::string *local = nullptr)
{
    return [peer, local](const ConnectionPtr &c) {
        if (peer) *peer = c->peer_address();
        if (local) *local = c->local_address();
        c->on_data([](Connection &conn, Buffer &in) { conn.write(in); });
    };
}

} // namespace

// Giving the file to another user needs root: meson runs [root] cases as a
// test of their own, which reports SKIP with the reason when not root.
TEST_CASE("a listener on unix:/path gives its file to unix_owner", "[unix][root]")
{
    if (geteuid() != 0) FAIL("not root: chown to another user needs root (meson's test of [root] cases skips)");
    TempDir dir;
    const std::string path = dir.path + "/owned.sock";
    Config config = tcp_config(1);
    config.set("unix_owner", "nobody");
    Runtime rt(config);
    rt.start();
    auto listener = rt.listen({"unix:" + path, 0}, echo(nullptr, nullptr));
    struct stat st;
    REQUIRE(lstat(path.c_str(), &st) == 0);
    CHECK(st.st_uid == getpwnam("nobody")->pw_uid);
}

TEST_CASE("a listener on unix:/path serves clients, sets unix_mode, and removes its file at close", "[unix]")
{
    TempDir dir;
    const std::string path = dir.path + "/echo.sock";
    Config config = tcp_config(1);
    config.set("unix_mode", "0600");
    Runtime rt(config);
    rt.start();
    std::string peer, local;
    auto listener = rt.listen({"unix:" + path, 0}, echo(&peer, &local));
    CHECK(listener->address() == "unix:" + path);
    struct stat st;
    REQUIRE(lstat(path.c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK((st.st_mode & 07777) == 0600);

    // And a framework client over the same path.
    std::string via_runtime, via_socket;
    rt.connect({"unix:" + path, 0}, [&](const ConnectionPtr &c, const std::string &err) {
        if (!c) {
            via_runtime = "error: " + err;
            return;
        }
        c->on_data([&](Connection &conn, Buffer &in) {
            via_runtime += in.take(in.size());
            conn.close();
        });
        c->write("over unix");
    });
    serve_while(rt, [&] {
        int fd = connect_unix(path);
        via_socket = exchange(fd, "hello");
        close(fd);
        std::this_thread::sleep_for(100ms);
    });
    CHECK(via_socket == "hello");
    CHECK(via_runtime == "over unix");
    CHECK(local == "unix:" + path);
    listener->close();
    CHECK(access(path.c_str(), F_OK) != 0); // removed with the listener
}

TEST_CASE("a stale Unix socket file is replaced, a live one refuses with EADDRINUSE, another file is never removed",
          "[unix]")
{
    TempDir dir;
    const std::string stale = dir.path + "/stale.sock", live = dir.path + "/live.sock", plain = dir.path + "/plain";
    close(listen_unix(stale)); // a crashed daemon's leftover: the file stays, nobody listens
    REQUIRE(access(stale.c_str(), F_OK) == 0);
    int live_fd = listen_unix(live);
    REQUIRE(live_fd >= 0);
    close(open(plain.c_str(), O_CREAT | O_WRONLY, 0644));

    Runtime rt(tcp_config(1));
    rt.start();
    auto replaced = rt.listen({"unix:" + stale, 0}, echo());
    std::string got;
    serve_while(rt, [&] {
        int fd = connect_unix(stale);
        got = exchange(fd, "fresh");
        close(fd);
    });
    CHECK(got == "fresh");

    Runtime rt2(tcp_config(1));
    rt2.start();
    try {
        auto unexpected = rt2.listen({"unix:" + live, 0}, echo());
        FAIL("listening on a live socket's path succeeded");
    } catch (const StartupError &e) {
        CHECK(std::string(e.what()).find("Address already in use") != std::string::npos);
    }
    CHECK(connect_unix(live) >= 0); // the live listener is untouched
    CHECK_THROWS_AS(rt2.listen({"unix:" + plain, 0}, echo()), StartupError);
    struct stat st;
    CHECK((lstat(plain.c_str(), &st) == 0 && S_ISREG(st.st_mode)));
    close(live_fd);
}

TEST_CASE("an abstract unix:@name listens and connects without a file", "[unix]")
{
    const std::string name = "@twinwire-test-" + std::to_string(getpid());
    Runtime rt(tcp_config(1));
    rt.start();
    auto listener = rt.listen({"unix:" + name, 0}, echo());
    std::string got;
    serve_while(rt, [&] {
        int fd = connect_unix(name);
        got = exchange(fd, "abstract");
        close(fd);
    });
    CHECK(got == "abstract");
}

TEST_CASE("a unix: address too long for sun_path is refused with the limit", "[unix]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    try {
        auto unexpected = rt.listen({"unix:/tmp/" + std::string(120, 'x'), 0}, echo());
        FAIL("a 125-byte path was accepted");
    } catch (const StartupError &e) {
        CHECK(std::string(e.what()).find("1..107 bytes") != std::string::npos);
    }
}

TEST_CASE("with LISTEN_FDS a daemon listens on the socket it was passed, by name, instead of binding",
          "[unix][activation]")
{
    const char *program = std::getenv("TW_TEST_ACTIVATION_ECHO");
    REQUIRE(program != nullptr);
    TempDir dir;
    const std::string web = dir.path + "/web.sock", admin = dir.path + "/admin.sock";
    int web_fd = listen_unix(web), admin_fd = listen_unix(admin);
    REQUIRE(web_fd >= 0);
    REQUIRE(admin_fd >= 0);
    int out[2];
    REQUIRE(pipe2(out, O_CLOEXEC) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // As systemd does: the sockets on fd 3 and 4, LISTEN_PID naming the exec'd process.
        // Out of the way first (either may already be 3 or 4); dup2 clears close-on-exec.
        int w = fcntl(web_fd, F_DUPFD_CLOEXEC, 100), a = fcntl(admin_fd, F_DUPFD_CLOEXEC, 100);
        dup2(out[1], 1);
        dup2(w, 3);
        dup2(a, 4);
        setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
        setenv("LISTEN_FDS", "2", 1);
        setenv("LISTEN_FDNAMES", "web:admin", 1);
        execl(program, program, "admin", static_cast<char *>(nullptr));
        _exit(127);
    }
    close(out[1]);
    std::string line;
    char c;
    pollfd p{out[0], POLLIN, 0};
    while (poll(&p, 1, 10000) > 0 && read(out[0], &c, 1) == 1 && c != '\n') line += c;
    close(out[0]);
    // Only the daemon holds the passed sockets now: it alone can accept.
    close(web_fd);
    close(admin_fd);
    int fd = connect_unix(admin);
    std::string got = exchange(fd, "activated");
    close(fd);
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(line == "unix:" + admin + " LISTEN_FDS=-"); // the variables are not passed on
    CHECK(got == "activated");
    CHECK(access(admin.c_str(), F_OK) == 0); // the service manager's file: left in place
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}
