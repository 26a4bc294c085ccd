// SPDX-License-Identifier: MIT
// Loop::run_once's wait limit: it keeps an armed limit that fires within
// the new one (run_until does not re-arm a timer every turn), and it never
// sleeps past the limit it was given.
#include <twinwire/loop.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

using namespace std::chrono_literals;
using twinwire::Loop;

namespace {

std::chrono::milliseconds elapsed_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
}

} // namespace

TEST_CASE("run_once sleeps no longer than its limit, also after a longer limit was armed", "[loop]")
{
    Loop loop(0);
    // A long limit, ended early by a task posted from another thread: its
    // timer may stay armed.
    std::thread poster([&] {
        std::this_thread::sleep_for(20ms);
        loop.post([] {});
    });
    auto start = std::chrono::steady_clock::now();
    loop.run_once(10s);
    poster.join();
    REQUIRE(elapsed_since(start) < 5s);

    // A shorter limit than the one still armed must be honoured.
    start = std::chrono::steady_clock::now();
    loop.run_once(30ms);
    CHECK(elapsed_since(start) < 5s);
}

TEST_CASE("run_once with a limit wakes at the limit when nothing happens, turn after turn", "[loop]")
{
    Loop loop(0);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) loop.run_once(20ms);
    // Five turns of at most 20 ms each: well under the 10 s of a limit
    // that was lost, and at least one limit's wait happened.
    auto took = elapsed_since(start);
    CHECK(took >= 20ms);
    CHECK(took < 5s);
}

TEST_CASE("run_until returns when its condition holds, on the turn a posted task makes it true", "[loop]")
{
    Loop loop(0);
    bool done = false;
    std::thread poster([&] {
        std::this_thread::sleep_for(20ms);
        loop.post([&] { done = true; });
    });
    auto start = std::chrono::steady_clock::now();
    bool ok = loop.run_until([&] { return done; }, 10s);
    poster.join();
    CHECK(ok);
    CHECK(elapsed_since(start) < 5s);
    // With nothing left to do, a short timeout still ends on time.
    start = std::chrono::steady_clock::now();
    CHECK_FALSE(loop.run_until([] { return false; }, 50ms));
    CHECK(elapsed_since(start) < 5s);
}
