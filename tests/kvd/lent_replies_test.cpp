// SPDX-License-Identifier: MIT
// LentReplies::send_in_place against a real TCP connection whose writes fail
// part way (issue 42 F1): the loop that feeds lent buffers ends on any
// failed write, the connection ends with it, and the loop thread is free.
#include "../sanitizer_stretch.hpp"
#include "../unit/socket_client.hpp"
#include "../unit/tcp_config.hpp"

#include "lent_replies.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

// A send_in_place that never returns spins the loop thread: no timer of
// that loop can end the case, so the client side gives up and exits.
const auto kBound = std::chrono::seconds(20 * twinwire::test::sanitizer_stretch());

struct LentOutcome {
    std::atomic<bool> done{false};
    bool returned = false;  ///< send_in_place's answer
    bool open_after = true; ///< conn.is_open() after it
    bool pending_cleared = false;
};

void wait_or_exit(const std::atomic<bool> &flag, const char *what)
{
    auto deadline = std::chrono::steady_clock::now() + kBound;
    while (!flag.load()) {
        if (std::chrono::steady_clock::now() > deadline) {
            std::fprintf(stderr, "FAILED: %s did not happen within the bound: the loop thread is stuck\n", what);
            std::fflush(stderr);
            std::_Exit(1);
        }
        std::this_thread::sleep_for(1ms);
    }
}

/// The server sends one GET-like reply of `value` through LentReplies when
/// the client's "GO" arrives (or, with `wait_for_client`, when the client
/// says so after its own step); reading pauses so that only the writes see
/// what the client did.
struct LentServer {
    LentServer(Config config, std::string value) : rt(std::move(config)), value(std::move(value)) { rt.start(); }

    void listen(bool wait_for_client)
    {
        listener = rt.listen({}, [this, wait_for_client](const ConnectionPtr &c) {
            c->on_data([this, wait_for_client](Connection &conn, Buffer &in) {
                in.clear();
                conn.pause_reading();
                if (wait_for_client) {
                    held = conn.shared_from_this();
                    got_go = true;
                } else {
                    send(conn);
                }
            });
        });
    }

    void send(Connection &conn)
    {
        kvd::LentReplies lender(conn);
        std::string pending = "+OK\r\n"; // a reply gathered before this one
        std::string header = "$" + std::to_string(value.size()) + "\r\n";
        outcome.returned = lender.send_in_place(pending, {header, value, "\r\n"});
        outcome.pending_cleared = pending.empty();
        outcome.open_after = conn.is_open();
        outcome.done = true;
    }

    Runtime rt;
    std::string value;
    std::shared_ptr<Listener> listener;
    ConnectionPtr held;
    std::atomic<bool> got_go{false};
    LentOutcome outcome;
};

void serve_until_done(LentServer &s, const std::function<void()> &client)
{
    std::thread t([&] {
        client();
        wait_or_exit(s.outcome.done, "send_in_place's return");
        s.rt.loop(0).post([&] { s.held.reset(); });
        s.rt.stop(false);
    });
    s.rt.run();
    t.join();
}

} // namespace

TEST_CASE("a lent reply that write_buffer_limit cannot hold ends the connection and send_in_place returns",
          "[kvd][lent]")
{
    Config config = tcp_config(1);
    config.set("write_buffer_limit", "64k");
    // Far more than the kernel's socket buffers and the 64 KiB limit take:
    // the lent buffers stop being free, and the copy of the rest is refused.
    LentServer s(config, std::string(32u << 20, 'v'));
    s.listen(false);
    SocketClient client(s.listener->port());
    serve_until_done(s, [&] { REQUIRE(client.send_all("GO")); }); // and never reads
    CHECK(s.outcome.returned);
    CHECK(s.outcome.pending_cleared);
    CHECK_FALSE(s.outcome.open_after);
}

TEST_CASE("a lent reply to a client that closed ends when a lent write fails, and send_in_place returns", "[kvd][lent]")
{
    LentServer s(tcp_config(1), std::string(8u << 20, 'v'));
    s.listen(true);
    auto client = std::make_unique<SocketClient>(s.listener->port());
    serve_until_done(s, [&] {
        REQUIRE(client->send_all("GO"));
        wait_or_exit(s.got_go, "the server's read of GO");
        client.reset(); // a FIN (nothing unread); the reply's first bytes then draw a reset
        s.rt.loop(0).post([&] { s.send(*s.held); });
    });
    CHECK(s.outcome.returned);
    CHECK(s.outcome.pending_cleared);
    CHECK_FALSE(s.outcome.open_after);
}

TEST_CASE("write_lent reports a send that failed after fill as the transport's negative code, and the connection ends",
          "[kvd][lent]")
{
    // The contract send_in_place relies on (connection.hpp): 0 would read as
    // "nothing sent", and a loop feeding write_lent would go round again.
    LentServer s(tcp_config(1), "");
    s.listen(true);
    auto client = std::make_unique<SocketClient>(s.listener->port());
    ssize_t last = 1;
    bool open_after = true;
    serve_until_done(s, [&] {
        REQUIRE(client->send_all("GO"));
        wait_or_exit(s.got_go, "the server's read of GO");
        client.reset(); // a FIN; the first bytes sent draw a reset
        s.rt.loop(0).post([&] {
            // Loopback answers the first segment with a reset at once: a
            // few buffers at most go before a send fails.
            for (int i = 0; i < 1000 && last > 0; ++i)
                last = s.held->write_lent(0, [](char *buf, size_t cap) {
                    std::memset(buf, 'v', cap);
                    return cap;
                });
            open_after = s.held->is_open();
            s.outcome.done = true;
        });
    });
    CAPTURE(last);
    CHECK(last < 0);
    CHECK(last != -EAGAIN);
    CHECK(last != -EBUSY);
    CHECK_FALSE(open_after);
}
