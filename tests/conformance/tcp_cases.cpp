// SPDX-License-Identifier: MIT
// Cases only the TCP backend has: socket options through ctrl, its config
// keys, and the wording of its errors.  Linked into conformance-tcp only.
#include "harness.hpp"

#include <twinwire/config.hpp>

#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>

using namespace twinwire;
using namespace twinwire::conformance;

namespace {

int socket_of(Endpoint &e)
{
    int fd = -1;
    OpGuard guard;
    REQUIRE(e.ops().ctrl(nullptr, e.conn(), nullptr, TW_CTRL_GET_FD, &fd, sizeof fd) == 0);
    return fd;
}

int nodelay_of(int fd)
{
    int v = -1;
    socklen_t len = sizeof v;
    REQUIRE(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len) == 0);
    return v;
}

} // namespace

TEST_CASE("tcp: TW_CTRL_GET_FD gives the connection's own socket, with TCP_NODELAY on by default", "[tcp]")
{
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect_both(server);
    int fd = socket_of(client);
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr *>(&local), &len) == 0);
    CHECK(to_text(local) == to_text(client.local_address()));
    CHECK(nodelay_of(fd) != 0);

    int off = 0, on = 1;
    OpGuard guard;
    CHECK(env.ops().ctrl(nullptr, client.conn(), nullptr, TW_CTRL_SET_NODELAY, &off, sizeof off) == 0);
    CHECK(nodelay_of(fd) == 0);
    CHECK(env.ops().ctrl(nullptr, client.conn(), nullptr, TW_CTRL_SET_NODELAY, &on, sizeof on) == 0);
    CHECK(nodelay_of(fd) != 0);
    CHECK(env.ops().ctrl(nullptr, client.conn(), nullptr, 0x7777, &on, sizeof on) == -EOPNOTSUPP);
    // The data's length is checked, and another transport's namespace is not TCP's.
    CHECK(env.ops().ctrl(nullptr, client.conn(), nullptr, TW_CTRL_SET_NODELAY, &on, 1) == -EINVAL);
    CHECK(env.ops().ctrl(nullptr, client.conn(), "rdma", TW_CTRL_SET_NODELAY, &on, sizeof on) == -EOPNOTSUPP);
}

TEST_CASE("tcp: last_error names the call, the errno and a hint", "[tcp][errors]")
{
    Env env;
    sockaddr_storage nowhere = env.unused_address();
    Endpoint &client = env.connect(nowhere);
    REQUIRE(env.run_until([&] { return client.errors > 0; }));
    CHECK_THAT(client.last_error, Catch::Contains("connect") && Catch::Contains("ECONNREFUSED") &&
                                      Catch::Contains(to_text(nowhere)) && Catch::Contains("hint:"));
}

TEST_CASE("tcp: a bad tcp.* setting stops init with a reason naming the key and the value", "[tcp][config]")
{
    Config config;
    SECTION("tcp.nodelay")
    {
        config.set("tcp.nodelay", "maybe");
        CHECK_THROWS_WITH(Transport::builtin_tcp(config), Catch::Contains("tcp.nodelay") && Catch::Contains("maybe"));
    }
    SECTION("tcp.linger_ms")
    {
        config.set("tcp.linger_ms", "-5");
        CHECK_THROWS_WITH(Transport::builtin_tcp(config), Catch::Contains("tcp.linger_ms") && Catch::Contains("-5"));
    }
    SECTION("good values are taken")
    {
        config.set("tcp.nodelay", "off");
        config.set("tcp.linger_ms", "250");
        auto t = Transport::builtin_tcp(config);
        REQUIRE(t);
        CHECK_THAT(t->describe(), Catch::Contains("nodelay: no") && Catch::Contains("linger_ms: 250"));
    }
}
