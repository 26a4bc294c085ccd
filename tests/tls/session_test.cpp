// SPDX-License-Identifier: MIT
// What a program sees of the tls transport through the framework: the
// session each end negotiated (TW_TLS_CTRL_SESSION), a client's second
// connection resuming the first one's session, the client's certificate
// under mutual TLS, and the errc of each kind of failed connect.
// Certificates: TLS_TEST_CERTS, made by make-certs.sh (run_with_certs.sh).
#include <twinwire/runtime.hpp>
#include <twinwire/tls.h>

#include <catch2/catch.hpp>

#include "test_certs.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using twinwire::Buffer;
using twinwire::Connection;
using twinwire::ConnectionPtr;

struct Session {
    int rc = -1;
    tw_tls_session s{};
};

Session session_of(const Connection &c)
{
    Session out;
    out.s.size = sizeof out.s;
    out.rc = c.transport_ctrl("tls", TW_TLS_CTRL_SESSION, &out.s, sizeof out.s);
    return out;
}

struct Round {
    bool echoed = false;
    Session client, server;
    twinwire::ConnectError error;
};

// Connections one after another, each sending a line, waiting for it to come
// back, reading both ends' sessions and closing; to an echo server over tls
// in the same runtime, or to `port` when given.
struct Rounds : std::enable_shared_from_this<Rounds> {
    twinwire::Runtime &runtime;
    size_t wanted;
    uint16_t port = 0;
    std::vector<Round> done;

    Rounds(twinwire::Runtime &rt, size_t n) : runtime(rt), wanted(n) {}

    void next()
    {
        if (done.size() == wanted) return runtime.stop(false);
        done.emplace_back();
        auto self = shared_from_this();
        size_t i = done.size() - 1; // a closure's round: done may grow meanwhile
        runtime.connect({"127.0.0.1", port}, [self, i](const ConnectionPtr &c, const twinwire::ConnectError &error) {
            if (!c) {
                self->done[i].error = error;
                return self->next();
            }
            c->on_data([self, i](Connection &conn, Buffer &in) {
                if (in.find("\n") == std::string::npos) return;
                in.clear();
                Round &r = self->done[i];
                r.echoed = true;
                r.client = session_of(conn);
                conn.close();
                self->next();
            });
            c->on_close([self, i](Connection &, const twinwire::CloseInfo &info) {
                Round &r = self->done[i];
                if (r.echoed) return;
                r.error.code = info.code;
                r.error.message = info.reason;
                self->next();
            });
            c->write(std::string("hello over tls\n"));
        });
    }
};

std::vector<Round> run_rounds(twinwire::Config config, size_t n, uint16_t port = 0)
{
    twinwire::Runtime runtime(std::move(config));
    runtime.start();
    auto rounds = std::make_shared<Rounds>(runtime, n);
    std::shared_ptr<twinwire::Listener> listener;
    if (port) {
        rounds->port = port;
    } else {
        listener = runtime.listen({"127.0.0.1", 0}, [rounds](const ConnectionPtr &c) {
            c->on_data([rounds](Connection &conn, Buffer &in) {
                rounds->done.back().server = session_of(conn);
                conn.write(in);
            });
            c->on_eof([](Connection &conn) { conn.close(); });
        });
        rounds->port = listener->port();
    }
    bool timed_out = false;
    twinwire::Timer deadline(runtime.loop(0), [&] {
        timed_out = true;
        runtime.stop(false);
    });
    deadline.start(std::chrono::seconds(60));
    rounds->next();
    runtime.run();
    REQUIRE_FALSE(timed_out);
    return rounds->done;
}

// A plain TCP server that answers whatever arrives with a Redis error line.
class PlainServer {
public:
    PlainServer()
    {
        fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        REQUIRE(bind(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
        REQUIRE(listen(fd_, 4) == 0);
        REQUIRE(getsockname(fd_, reinterpret_cast<sockaddr *>(&addr), &len) == 0);
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] {
            int c = accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            char buf[4096];
            if (read(c, buf, sizeof buf) > 0) (void)!write(c, "-ERR unknown command\r\n", 22);
            shutdown(c, SHUT_WR);
            while (read(c, buf, sizeof buf) > 0) {
            }
            close(c);
        });
    }
    ~PlainServer()
    {
        shutdown(fd_, SHUT_RDWR);
        thread_.join();
        close(fd_);
    }
    uint16_t port() const { return port_; }

private:
    int fd_ = -1;
    uint16_t port_ = 0;
    std::thread thread_;
};

} // namespace

TEST_CASE("both ends see the session they negotiated: TLS 1.3, the server's certificate, not resumed", "[tls]")
{
    auto rounds = run_rounds(tls_config(), 1);
    REQUIRE(rounds.size() == 1);
    INFO(rounds[0].error.message);
    REQUIRE(rounds[0].echoed);
    CHECK(rounds[0].client.rc == 0);
    CHECK(rounds[0].server.rc == 0);
    CHECK(std::string(rounds[0].client.s.protocol) == "TLSv1.3");
    CHECK(std::string(rounds[0].client.s.peer_subject) == "CN=localhost");
    CHECK(rounds[0].client.s.verify_result == 0);
    CHECK(std::string(rounds[0].server.s.peer_subject).empty()); // no client certificate asked for
    CHECK(rounds[0].client.s.resumed == 0);
}

TEST_CASE("a client's later connections to the same server resume its session, and both ends say so", "[tls]")
{
    auto rounds = run_rounds(tls_config(), 3);
    REQUIRE(rounds.size() == 3);
    for (const Round &r : rounds) {
        INFO(r.error.message);
        REQUIRE(r.echoed);
    }
    CHECK(rounds[0].client.s.resumed == 0);
    CHECK(rounds[1].client.s.resumed == 1);
    CHECK(rounds[1].server.s.resumed == 1);
    CHECK(rounds[2].client.s.resumed == 1);
}

TEST_CASE("with tls.session_resumption = no every connection makes a full handshake", "[tls]")
{
    auto config = tls_config();
    config.set("tls.session_resumption", "no");
    auto rounds = run_rounds(config, 2);
    REQUIRE(rounds.size() == 2);
    REQUIRE(rounds[1].echoed);
    CHECK(rounds[1].client.s.resumed == 0);
    CHECK(rounds[1].server.s.resumed == 0);
}

TEST_CASE("under mutual TLS the server sees the client's certificate, verified", "[tls]")
{
    auto config = tls_config();
    config.set("tls.verify", "required");
    auto rounds = run_rounds(config, 1);
    INFO(rounds[0].error.message);
    REQUIRE(rounds[0].echoed);
    CHECK(std::string(rounds[0].server.s.peer_subject) == "CN=localhost");
    CHECK(rounds[0].server.s.verify_result == 0);
}

TEST_CASE("tls.ciphersuites and tls.min_protocol = 1.3 decide what both ends negotiate", "[tls]")
{
    auto config = tls_config();
    config.set("tls.min_protocol", "1.3");
    config.set("tls.ciphersuites", "TLS_CHACHA20_POLY1305_SHA256");
    auto rounds = run_rounds(config, 1);
    INFO(rounds[0].error.message);
    REQUIRE(rounds[0].echoed);
    CHECK(std::string(rounds[0].client.s.protocol) == "TLSv1.3");
    CHECK(std::string(rounds[0].client.s.cipher) == "TLS_CHACHA20_POLY1305_SHA256");
    CHECK(std::string(rounds[0].server.s.cipher) == "TLS_CHACHA20_POLY1305_SHA256");
}

TEST_CASE("tls.ca_dir alone verifies the server, as tls.ca_file does", "[tls]")
{
    twinwire::Config config;
    config.load_environment();
    config.set("transport", "tls");
    config.set("threads", "1");
    config.set("tls.cert_file", cert("server.pem"));
    config.set("tls.key_file", cert("server.key"));
    config.set("tls.ca_dir", cert("cadir"));
    auto rounds = run_rounds(config, 1);
    INFO(rounds[0].error.message);
    REQUIRE(rounds[0].echoed);
    CHECK(rounds[0].client.s.verify_result == 0);
}

TEST_CASE("a server certificate from an unknown CA fails the connect with errc::permission_denied and OpenSSL's reason",
          "[tls]")
{
    auto config = tls_config();
    config.set("tls.ca_file", cert("rogue-ca.pem"));
    auto rounds = run_rounds(config, 1);
    REQUIRE_FALSE(rounds[0].echoed);
    CHECK(rounds[0].error.code == twinwire::errc::permission_denied);
    CHECK_THAT(rounds[0].error.message,
               Catch::Contains("the server's certificate failed verification: unable to get local issuer "
                               "certificate (subject CN=localhost, depth 0)"));
}

TEST_CASE("a TLS client on a plain port fails with errc::protocol_mismatch, quoting what the server answered", "[tls]")
{
    PlainServer plain;
    auto rounds = run_rounds(tls_config(), 1, plain.port());
    REQUIRE_FALSE(rounds[0].echoed);
    CHECK(rounds[0].error.code == twinwire::errc::protocol_mismatch);
    CHECK_THAT(rounds[0].error.message,
               Catch::Contains("the server does not speak TLS: it answered '-ERR unknown command\\x0d\\x0a'"));
}

namespace {

bool kernel_offers_tls_ulp()
{
    std::FILE *f = std::fopen("/proc/sys/net/ipv4/tcp_available_ulp", "r");
    if (!f) return false;
    char line[256] = "";
    bool ok = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    std::string ulps = " " + std::string(ok ? line : "");
    if (!ulps.empty() && ulps.back() == '\n') ulps.pop_back();
    return (ulps + " ").find(" tls ") != std::string::npos;
}

} // namespace

TEST_CASE("over inner tcp, where the kernel offers the tls ULP, a TLS 1.2 session's records are sealed and opened by "
          "the kernel (kTLS); TLS 1.3, tls.ktls = off and kernels without it keep them in user space",
          "[tls][ktls]")
{
    const bool ulp = kernel_offers_tls_ulp();
    // The SoftRoCE guest's kernel loads the tls module: a guest run that
    // lost it would pass here without checking anything.
    if (std::getenv("TLS_EXPECT_KTLS")) REQUIRE(ulp);
    auto tls12 = tls_config();
    tls12.set("tls.max_protocol", "1.2");
    auto rounds = run_rounds(tls12, 2); // the second one resumed
    for (const Round &r : rounds) {
        INFO(r.error.message);
        REQUIRE(r.echoed);
        CHECK(std::string(r.client.s.protocol) == "TLSv1.2");
        REQUIRE(r.client.s.version >= 2);
        const uint32_t both = ulp ? TW_TLS_KTLS_SEND | TW_TLS_KTLS_RECEIVE : 0;
        CHECK(r.client.s.kernel_tls == both);
        CHECK(r.server.s.kernel_tls == both);
    }
    CHECK(rounds[1].client.s.resumed == 1);

    auto tls13 = run_rounds(tls_config(), 1);
    INFO(tls13[0].error.message);
    REQUIRE(tls13[0].echoed);
    CHECK(std::string(tls13[0].client.s.protocol) == "TLSv1.3");
    CHECK(tls13[0].client.s.kernel_tls == 0);
    CHECK(tls13[0].server.s.kernel_tls == 0);

    tls12.set("tls.ktls", "off");
    auto off = run_rounds(tls12, 1);
    INFO(off[0].error.message);
    REQUIRE(off[0].echoed);
    CHECK(off[0].client.s.kernel_tls == 0);
    CHECK(off[0].server.s.kernel_tls == 0);
}
