// SPDX-License-Identifier: MIT
// Logs an attacker can reach (issue 11 item 9): peer bytes never reach the
// log raw, and a line repeated without end is written a bounded number of
// times, with the count of what was held back.
#include "log_capture.hpp"

#include <twinwire/log.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

using namespace twinwire;

TEST_CASE("control bytes, line breaks and bytes above 0x7e in a log message are written escaped", "[log]")
{
    LogCapture logs;
    const std::string peer_bytes = std::string("GET\r\n\x1b[31mX\x00Y\xff\\", 15);
    TW_WARN("test-escape", "client sent '%s'", peer_bytes.c_str()); // "%s" stops at the NUL
    TW_WARN("test-escape", "client sent '%s'", log::printable(peer_bytes).c_str());
    auto lines = logs.from("test-escape");
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].text == "client sent 'GET\\r\\n\\x1b[31mX'");
    CHECK(lines[1].text == "client sent 'GET\\r\\n\\x1b[31mX\\x00Y\\xff\\\\'");
    CHECK(log::printable(std::string(100, 'a'), 10) == "aaaaaaaaaa...");
}

TEST_CASE("a line repeated without end is written a bounded number of times, and the next one after the pause "
          "says how many were suppressed",
          "[log]")
{
    LogCapture logs;
    log::set_rate_limit(5, 1);
    for (int i = 0; i < 1000; ++i) TW_WARN("test-flood", "accept from 10.0.0.%d:%d failed", i % 256, 40000 + i);
    TW_WARN("test-flood", "a different line");
    CHECK(logs.from("test-flood").size() == 6);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    TW_WARN("test-flood", "accept from 10.0.0.1:1 failed");
    auto lines = logs.from("test-flood");
    log::set_rate_limit(10, 10);
    REQUIRE(lines.size() == 7);
    CHECK(lines[6].text == "accept from 10.0.0.1:1 failed (995 similar lines suppressed)");
}

TEST_CASE("debug lines are never held back by the rate limit", "[log]")
{
    LogCapture logs;
    LogLevel before = log::level();
    log::set_level(LogLevel::Debug);
    for (int i = 0; i < 100; ++i) TW_DEBUG("test-debug", "step %d", i);
    log::set_level(before);
    CHECK(logs.from("test-debug").size() == 100);
}
