// SPDX-License-Identifier: MIT
// The notify protocol against a datagram socket the test creates, as
// systemd would: one datagram, a path or an abstract name.
#include "service_notify.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace {

// A bound AF_UNIX datagram socket standing in for the service manager.
struct FakeManager {
    int fd = -1;
    std::string name; ///< as NOTIFY_SOCKET says it

    explicit FakeManager(const std::string &notify_socket) : name(notify_socket)
    {
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        REQUIRE(fd >= 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, name.data(), name.size());
        if (name[0] == '@') addr.sun_path[0] = '\0';
        REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&addr),
                     static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size())) == 0);
        timeval tv{2, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setenv("NOTIFY_SOCKET", name.c_str(), 1);
    }
    ~FakeManager()
    {
        unsetenv("NOTIFY_SOCKET");
        close(fd);
        if (name[0] == '/') unlink(name.c_str());
    }
    std::string receive()
    {
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        return n < 0 ? std::string("(nothing received)") : std::string(buf, size_t(n));
    }
};

} // namespace

TEST_CASE("the service manager gets READY=1 and the STATUS line as one datagram on a socket path", "[notify]")
{
    char dir[] = "/tmp/kvd-notify-XXXXXX";
    REQUIRE(mkdtemp(dir));
    {
        FakeManager manager(std::string(dir) + "/notify");
        CHECK(kvd::notify_service_manager("READY=1\nSTATUS=serving over tcp") == "");
        CHECK(manager.receive() == "READY=1\nSTATUS=serving over tcp");
    }
    rmdir(dir);
}

TEST_CASE("an abstract NOTIFY_SOCKET (@name) is reached in the abstract namespace", "[notify]")
{
    FakeManager manager("@kvd-notify-test-" + std::to_string(getpid()));
    CHECK(kvd::notify_service_manager("STOPPING=1") == "");
    CHECK(manager.receive() == "STOPPING=1");
}

TEST_CASE("without NOTIFY_SOCKET nothing is sent and nothing fails; a bad one is reported", "[notify]")
{
    unsetenv("NOTIFY_SOCKET");
    CHECK(kvd::notify_service_manager("READY=1") == "");
    setenv("NOTIFY_SOCKET", "relative/path", 1);
    CHECK(kvd::notify_service_manager("READY=1").find("neither an absolute path") != std::string::npos);
    setenv("NOTIFY_SOCKET", "/nonexistent/notify", 1);
    CHECK(kvd::notify_service_manager("READY=1").find("sendto NOTIFY_SOCKET /nonexistent/notify") == 0);
    unsetenv("NOTIFY_SOCKET");
}
