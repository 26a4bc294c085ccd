// SPDX-License-Identifier: MIT
// A TLS 1.3 peer may ask for new keys at any time (KeyUpdate): a session of
// the tls transport follows, whether it runs over memory BIOs or on the
// socket (the kernel may not take new keys, so TLS 1.3 never goes to it:
// socket_backend/tls/direct.cpp).  The peer is OpenSSL's own client on a
// blocking socket, which is why this program, unlike the others built on
// libtwinwire, links libssl.  Certificates: TLS_TEST_CERTS (run_with_certs.sh).
#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include "test_certs.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

// A plain OpenSSL client on a blocking socket: sends a line and reads it
// back, asks the server for new keys (KeyUpdate, update requested) twice
// with a line after each, and appends what came back to *got.  "" or why not.
std::string key_update_client(uint16_t port, std::string *got)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    timeval bound{30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) return "connect failed";
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_load_verify_locations(ctx, cert("ca.pem").c_str(), nullptr);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    std::string why;
    auto echo = [&](const std::string &line) {
        if (SSL_write(ssl, line.data(), static_cast<int>(line.size())) != static_cast<int>(line.size()))
            return why = "write failed", false;
        size_t want = got->size() + line.size();
        char buf[256];
        while (got->size() < want) {
            int n = SSL_read(ssl, buf, sizeof buf);
            if (n <= 0) {
                char text[256] = "";
                ERR_error_string_n(ERR_get_error(), text, sizeof text);
                return why = std::string("read failed: ") + text, false;
            }
            got->append(buf, static_cast<size_t>(n));
        }
        return true;
    };
    if (SSL_connect(ssl) != 1) why = "handshake failed";
    else if (echo("before\n") && SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1 && echo("after one update\n") &&
             SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1)
        echo("after two\n");
    SSL_shutdown(ssl);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    return why;
}

} // namespace

TEST_CASE("a TLS 1.3 client that asks for new keys (KeyUpdate) mid-session keeps getting every reply", "[tls][ktls]")
{
    twinwire::Runtime runtime(tls_config());
    runtime.start();
    auto listener = runtime.listen({"127.0.0.1", 0}, [](const twinwire::ConnectionPtr &c) {
        c->on_data([](twinwire::Connection &conn, twinwire::Buffer &in) {
            conn.write(in);
            in.clear();
        });
        c->on_eof([](twinwire::Connection &conn) { conn.close(); });
    });
    const uint16_t port = listener->port();
    std::string got, why;
    std::thread client([&] {
        why = key_update_client(port, &got);
        runtime.stop(false);
    });
    twinwire::Timer deadline(runtime.loop(0), [&] { runtime.stop(false); });
    deadline.start(std::chrono::seconds(60));
    runtime.run();
    client.join();
    INFO(why);
    CHECK(got == "before\nafter one update\nafter two\n");
}
