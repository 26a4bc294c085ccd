// SPDX-License-Identifier: MIT
// An exception escaping any application callback closes that connection only
// (close code errc::callback_threw, the reason logged) or, for timers, tasks
// and on_close, is logged; the process keeps serving (issue 12 item 3).
#include "callback_exceptions.hpp"
#include "log_capture.hpp"
#include "tcp_config.hpp"

#include <catch2/catch.hpp>

using namespace twinwire;

TEST_CASE("an exception from each kind of callback over TCP closes only its connection with errc::callback_threw, "
          "is logged, and the runtime keeps serving",
          "[connection][exceptions]")
{
    LogCapture logs;
    callback_exceptions::Report r = callback_exceptions::run(tcp_config(1), "127.0.0.1", "", 30, 8u << 20);
    INFO("stuck at: " << r.stuck_at << "; connect error: " << r.connect_error);
    REQUIRE(r.stuck_at.empty());
    REQUIRE(r.connect_error.empty());
    for (const char *kind : {"accept", "data", "drain", "eof"}) {
        INFO("kind " << kind << ": " << r.server_ends[kind].reason);
        CHECK(r.server_ends[kind].code == errc::callback_threw);
        CHECK(r.server_ends[kind].reason.find("threw on purpose") != std::string::npos);
        CHECK(r.client_ends[kind].by_peer); // the peer saw its connection end, nothing else
    }
    INFO("connect: " << r.client_ends["connect"].reason);
    CHECK(r.client_ends["connect"].code == errc::callback_threw);
    CHECK(r.server_ends["connect"].code == errc::peer_closed);
    CHECK(r.echoed == "echo"); // after all of it, still serving
    CHECK(r.client_ends["echo"].code == errc::closed_locally);

    std::string all;
    for (const auto &line : logs.lines)
        if (line.level == LogLevel::Error) all += line.text + "\n";
    INFO(all);
    for (const char *text :
         {"the accept handler threw: the accept handler threw on purpose",
          "the connect handler threw: the connect handler threw on purpose",
          "on_data callback threw: on_data threw on purpose", "on_drain callback threw: on_drain threw on purpose",
          "on_eof callback threw: on_eof threw on purpose", "on_close callback threw: on_close threw on purpose",
          "timer callback threw: a timer threw on purpose", "posted task threw: a posted task threw on purpose",
          "signal handler threw: a signal handler threw on purpose"})
        CHECK(all.find(text) != std::string::npos);
}
