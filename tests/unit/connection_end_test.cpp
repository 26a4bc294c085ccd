// SPDX-License-Identifier: MIT
// How connections end: a peer's half-close does not cut the replies off
// (issue 11 item 6), and an exception from application code ends only its
// own connection (the loop, the listener and the other clients go on).
#include "log_capture.hpp"
#include "socket_client.hpp"
#include "tcp_config.hpp"

#include <twinwire/runtime.hpp>

#include "serve_while.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <new>
#include <stdexcept>
#include <thread>

using namespace twinwire;
using twtest::serve_while;
using namespace std::chrono_literals;

namespace {

} // namespace

TEST_CASE("a request sent together with end-of-stream gets the reply the server defers to a timer", "[connection]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    bool saw_eof_flag = false;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        auto reply = std::make_shared<Timer>(c->loop(), [c] {
            c->write("+PONG\r\n");
            if (c->peer_closed()) c->close();
        });
        c->on_data([reply](Connection &, Buffer &in) {
            in.drain(in.size());
            reply->start(20ms); // answered on a later loop turn, as daemons that batch replies do
        });
        c->on_eof([&, reply](Connection &conn) {
            saw_eof_flag = conn.peer_closed();
            if (!reply->active()) conn.close();
        });
        c->on_close([reply](Connection &, const CloseInfo &) { reply->stop(); });
    });
    std::string got;
    bool ended = false;
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        client.send_all("*1\r\n$4\r\nPING\r\n");
        client.shutdown_write(); // nc -N: the request and the FIN arrive in one read
        got = client.read_to_end(5000, &ended);
    });
    CHECK(got == "+PONG\r\n");
    CHECK(ended); // and the server closed once it had answered
    CHECK(saw_eof_flag);
}

TEST_CASE("without an on_eof handler the replies written in on_data still reach a peer that half-closed",
          "[connection]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    CloseInfo server_end;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        c->on_data([](Connection &conn, Buffer &in) { conn.write(in); });
        c->on_close([&](Connection &, const CloseInfo &info) { server_end = info; });
    });
    std::string got;
    bool ended = false;
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        client.send_all("echo me");
        client.shutdown_write();
        got = client.read_to_end(5000, &ended);
    });
    CHECK(got == "echo me");
    CHECK(ended);
    CHECK(server_end.by_peer);
    CHECK(server_end.error == 0);
}

TEST_CASE("an exception thrown by a data callback closes that connection only, std::bad_alloc included, and the "
          "server keeps serving",
          "[connection]")
{
    LogCapture logs;
    Runtime rt(tcp_config(1));
    rt.start();
    std::vector<CloseInfo> ends;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        c->on_data([](Connection &conn, Buffer &in) {
            std::string text = in.take(in.size());
            if (text == "throw") throw std::runtime_error("the handler failed on purpose");
            if (text == "oom") throw std::bad_alloc();
            if (text == "int") throw 42;
            conn.write(text);
        });
        c->on_close([&](Connection &, const CloseInfo &info) { ends.push_back(info); });
    });
    std::string thrown, oom, odd, fine;
    bool thrown_ended = false, oom_ended = false, odd_ended = false;
    serve_while(rt, [&] {
        SocketClient a(listener->port()), b(listener->port()), c(listener->port()), d(listener->port());
        a.send_all("throw");
        thrown = a.read_to_end(5000, &thrown_ended);
        b.send_all("oom");
        oom = b.read_to_end(5000, &oom_ended);
        c.send_all("int");
        odd = c.read_to_end(5000, &odd_ended);
        d.send_all("still here");
        fine = d.read_to_end(300);
    });
    CHECK(thrown.empty());
    CHECK(thrown_ended);
    CHECK(oom.empty());
    CHECK(oom_ended);
    CHECK(odd.empty());
    CHECK(odd_ended);
    CHECK(fine == "still here");
    REQUIRE(ends.size() >= 3);
    CHECK(ends[0].error == -ECONNABORTED);
    CHECK(ends[0].reason.find("on_data callback threw: the handler failed on purpose") != std::string::npos);
    size_t errors = 0;
    for (const auto &line : logs.from("conn"))
        if (line.level == LogLevel::Error && line.text.find("threw") != std::string::npos) ++errors;
    CHECK(errors == 3);
}

TEST_CASE("an exception thrown by an accept handler or a timer is logged and the loop goes on", "[connection]")
{
    LogCapture logs;
    Runtime rt(tcp_config(1));
    rt.start();
    std::atomic<int> accepted{0};
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        if (accepted++ == 0) throw std::runtime_error("no thanks");
        c->on_data([](Connection &conn, Buffer &in) { conn.write(in); });
    });
    Timer throwing(rt.loop(0), [] { throw std::runtime_error("timer failed on purpose"); });
    throwing.start(1ms);
    std::string first, second;
    bool first_ended = false;
    serve_while(rt, [&] {
        SocketClient a(listener->port());
        a.send_all("x");
        first = a.read_to_end(5000, &first_ended);
        SocketClient b(listener->port());
        b.send_all("y");
        second = b.read_to_end(300);
    });
    CHECK(first.empty());
    CHECK(first_ended);
    CHECK(second == "y");
    bool timer_logged = false;
    for (const auto &line : logs.from("loop"))
        timer_logged |= line.text.find("timer failed on purpose") != std::string::npos;
    CHECK(timer_logged);
}
