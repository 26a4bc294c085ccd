// SPDX-License-Identifier: MIT
// Conformance: ending connections - half-close, resets, and close from
// inside every kind of callback.
#include "harness.hpp"
#include "needs.hpp"
#include "payload.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

using namespace twinwire::conformance;

TEST_CASE("half-close: after shutdown(SHUT_WR) the peer reads the data, then end-of-stream, and can still answer",
          "[close]")
{
    // Accepts: a write after SHUT_WR returns any negative code but -EAGAIN (-EPIPE).
    CONFORMANCE_NEEDS(TW_NEED_CAP(TW_CAP_HALF_CLOSE));
    Env env;
    Server &server = env.listen();
    server.echo = false;
    Endpoint &client = env.connect(server);
    REQUIRE(env.run_until([&] { return client.connected || client.errors; }));
    client.send("ping");
    client.shutdown_after_flush();
    REQUIRE(env.run_until([&] { return (!server.endpoints.empty() && server.endpoints[0]->eof) || client.failed(); }));
    Endpoint &peer = *server.endpoints[0];
    CHECK(peer.received == "ping");
    CHECK(peer.read_error == 0);

    peer.send("pong, after your end-of-stream");
    peer.shutdown_after_flush();
    REQUIRE(env.run_until([&] { return client.eof || client.failed(); }));
    CHECK(client.received == "pong, after your end-of-stream");
    CHECK_FALSE(client.failed());
    char byte = 'x';
    ssize_t rc = client.write(&byte, 1); // the write side is shut
    CHECK(rc < 0);
    CHECK(rc != -EAGAIN);
    CHECK(env.rule_violations() == "");
}

// Accepts: shutdown returns any negative code but -EAGAIN (the host's stub
// for a missing shutdown returns -EOPNOTSUPP).
TEST_CASE("without TW_CAP_HALF_CLOSE, shutdown(SHUT_WR) is refused rather than pretended", "[close][errors]")
{
    CONFORMANCE_NEEDS(TW_NEED_NO_CAP(TW_CAP_HALF_CLOSE));
    Env env;
    Server &server = env.listen();
    Endpoint &client = env.connect_both(server);
    int rc = client.shutdown(SHUT_WR);
    CHECK(rc < 0);
    CHECK(rc != -EAGAIN);
    // The connection is untouched: it still carries data both ways.
    client.send("still open");
    REQUIRE(env.run_until([&] { return client.received.size() >= 10 || client.failed(); }));
    CHECK(client.received == "still open");
}

// Accepts: TW_EV_ERROR once with any negative code but -EAGAIN
// (-ECONNRESET, -EPIPE, -TW_EPEERPROTO, ...).
TEST_CASE("a peer that resets the connection mid-message surfaces as an error, not a hang", "[close][errors]")
{
    Env env;
    Server &server = env.listen();
    server.echo = false;
    // The server reads a little and closes with unread bytes left: a reset.
    server.configure = [](Endpoint &e) {
        e.on_event = [](Endpoint &self, uint32_t events) {
            if (!(events & TW_EV_READ)) return true;
            char head[1000];
            if (self.read(head, sizeof head) > 0) {
                self.close();
                return false;
            }
            return true;
        };
    };
    Endpoint &client = env.connect(server);
    client.send(make_payload(size_t(8) << 20, 3));
    // The failure shows up in whatever the client does next: a read or
    // write error, or TW_EV_ERROR from the loop.
    REQUIRE(env.run_until([&] { return client.failed(); }));
    INFO(client.describe());
    // Rule 5: however it was noticed, the failure is also reported once as TW_EV_ERROR.
    REQUIRE(env.run_until([&] { return client.errors > 0; }));
    env.spin();
    CHECK(client.errors == 1);
    CHECK(client.error_code < 0);
    CHECK(client.error_code != -EAGAIN);
    CHECK_FALSE(client.last_error.empty());
    CHECK(env.rule_violations() == "");
}

TEST_CASE("close is safe from inside every kind of callback", "[close][rules]")
{
    Env env;
    Server &server = env.listen();
    auto close_on = [](uint32_t which) {
        return [which](Endpoint &self, uint32_t events) {
            if (!(events & which)) return true;
            self.close();
            return false;
        };
    };

    SECTION("TW_EV_CONNECTED")
    {
        Endpoint &client = env.connect(server);
        client.on_event = close_on(TW_EV_CONNECTED);
        REQUIRE(env.run_until(
            [&] { return !server.endpoints.empty() && (server.endpoints[0]->eof || server.endpoints[0]->failed()); }));
        CHECK(client.closed);
    }
    SECTION("TW_EV_CONNECTED on the accepting side")
    {
        server.configure = [&](Endpoint &e) { e.on_event = close_on(TW_EV_CONNECTED); };
        Endpoint &client = env.connect(server);
        REQUIRE(env.run_until([&] { return client.eof || client.failed(); }));
        CHECK(server.endpoints.at(0)->closed);
    }
    SECTION("TW_EV_READ")
    {
        server.configure = [&](Endpoint &e) { e.on_event = close_on(TW_EV_READ); };
        Endpoint &client = env.connect(server);
        client.send("wake the reader");
        REQUIRE(env.run_until([&] { return client.eof || client.failed(); }));
        CHECK(server.endpoints.at(0)->closed);
    }
    SECTION("TW_EV_WRITE")
    {
        Endpoint &client = env.connect(server);
        client.on_event = [](Endpoint &self, uint32_t events) {
            if (events & TW_EV_CONNECTED) {
                self.manage_interest = false;
                self.set_events(TW_EV_READ | TW_EV_WRITE);
            }
            if (!(events & TW_EV_WRITE)) return true;
            self.close();
            return false;
        };
        REQUIRE(env.run_until(
            [&] { return !server.endpoints.empty() && (server.endpoints[0]->eof || server.endpoints[0]->failed()); }));
        CHECK(client.closed);
    }
    SECTION("TW_EV_ERROR")
    {
        Endpoint &client = env.connect(env.unused_address());
        client.on_event = close_on(TW_EV_ERROR);
        REQUIRE(env.run_until([&] { return client.closed; }));
    }
    SECTION("before any event arrived")
    {
        Endpoint &client = env.connect(server);
        client.close();
        CHECK(client.callbacks == 0);
    }
    env.spin(50); // any callback after a close would be counted now
    CHECK(env.rule_violations() == "");
}

TEST_CASE("bytes the transport accepted before close still reach the peer", "[close]")
{
    Env env;
    Server &server = env.listen();
    server.echo = false;
    server.configure = [](Endpoint &e) { e.pause_reading(); }; // nothing is read until the sender closed
    Endpoint &client = env.connect_both(server);
    Endpoint &reader = *server.endpoints[0];

    // Fill the transport with write() until it refuses, then lend one
    // zero-copy buffer on top (when it has them): everything it took must arrive.
    const std::string stream = make_payload(size_t(64) << 20, 21);
    size_t accepted = 0;
    for (;;) {
        ssize_t n = client.write(stream.data() + accepted, std::min<size_t>(size_t(1) << 20, stream.size() - accepted));
        if (n == -EAGAIN) break;
        REQUIRE(n > 0);
        accepted += static_cast<size_t>(n);
        REQUIRE(accepted < stream.size()); // the transport must push back at some point
    }
    if (TW_NEED_OP(send_buf_get).met) {
        OpGuard guard;
        tw_buf buf = TW_BUF_INIT;
        int rc = client.ops().send_buf_get(client.conn(), 0, &buf);
        if (rc == 0) {
            buf.len = std::min(buf.cap, stream.size() - accepted);
            memcpy(buf.data, stream.data() + accepted, buf.len);
            REQUIRE(client.ops().send_buf_submit(client.conn(), &buf) == 0);
            accepted += buf.len;
        } else {
            CHECK(rc == -EAGAIN);
        }
    }
    client.close();

    reader.resume_reading();
    REQUIRE(env.run_until([&] { return reader.eof || reader.failed(); }));
    INFO(reader.describe());
    CHECK_FALSE(reader.failed());
    CHECK(reader.received.size() == accepted);
    CHECK(checksum(reader.received) == checksum(std::string_view(stream).substr(0, accepted)));
    CHECK(env.rule_violations() == "");
}

// Accepts: any negative code but -EAGAIN (-EPIPE, -ECONNRESET), and a last_error.
TEST_CASE("writing to a peer that has gone returns an error and never raises SIGPIPE", "[close][errors]")
{
    // The default action of SIGPIPE ends the process: this case would not return.
    struct DefaultSigpipe {
        void (*old)(int) = signal(SIGPIPE, SIG_DFL);
        ~DefaultSigpipe() { signal(SIGPIPE, old); }
    } sigpipe;
    Env env;
    Server &server = env.listen();
    server.echo = false;
    Endpoint &client = env.connect_both(server);
    server.endpoints[0]->close();

    const std::string chunk = make_payload(64 * 1024, 8);
    ssize_t rc = 0;
    REQUIRE(env.run_until([&] {
        rc = client.write(chunk.data(), chunk.size());
        return rc < 0 && rc != -EAGAIN;
    }));
    INFO("write returned " << rc << "; last_error: " << client.ops().last_error(client.conn()));
    CHECK(rc < 0);
    CHECK_FALSE(std::string(client.ops().last_error(client.conn())).empty());
}

TEST_CASE("a writer that writes only on TW_EV_WRITE learns that the peer has gone: a write fails or TW_EV_ERROR "
          "comes",
          "[close][errors]")
{
    // Found over fault/rdma: after the peer's clean close the RDMA plugin
    // refused writes (-EPIPE) but reported neither TW_EV_WRITE nor
    // TW_EV_ERROR, so a host waiting to flush waited for ever. A socket
    // reports POLLOUT (and POLLERR) then: the write that follows fails.
    Env env;
    Server &server = env.listen();
    server.echo = false;
    Endpoint &client = env.connect_both(server);
    server.endpoints[0]->pause_reading();
    const std::string chunk = make_payload(64 * 1024, 9);
    bool blocked = false;
    int result = 0; // < 0: a write failed, or TW_EV_ERROR came
    client.manage_interest = false;
    client.auto_read = false;
    client.on_event = [&](Endpoint &e, uint32_t events) {
        if (events & TW_EV_ERROR) {
            if (!result) result = -1;
            return true; // the default handling records it
        }
        if (!(events & TW_EV_WRITE) || result) return false;
        for (;;) {
            ssize_t rc = e.ops().write(e.conn(), chunk.data(), chunk.size());
            if (rc == -EAGAIN) {
                blocked = true;
                break;
            }
            if (rc < 0) {
                result = static_cast<int>(rc);
                e.ops().set_events(e.conn(), 0);
                break;
            }
        }
        return false;
    };
    REQUIRE(client.ops().set_events(client.conn(), TW_EV_WRITE) == 0);
    REQUIRE(env.run_until([&] { return blocked; }));
    server.endpoints[0]->close();
    INFO("client: " << client.describe());
    CHECK(env.run_until([&] { return result != 0; }));
}
