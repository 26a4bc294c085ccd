// SPDX-License-Identifier: MIT
// The keyspace shared by loop threads: atomic updates and multi-key commands.
#include "session_fixture.hpp"

#include <catch2/catch.hpp>

#include <thread>

TEST_CASE("INCR from several threads on shared keys loses no update", "[kvd][keyspace]")
{
    kvd_test::ManualClock clock;
    kvd::Keyspace ks(clock);
    constexpr int kThreads = 4, kRounds = 20000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&ks] {
            long long ignored = 0;
            for (int i = 0; i < kRounds; ++i) {
                ks.incr_by("counter", 1, ignored);
                ks.incr_by("counter" + std::to_string(i % 7), 1, ignored);
            }
        });
    for (auto &t : threads) t.join();
    long long total = 0;
    ks.incr_by("counter", 0, total);
    CHECK(total == kThreads * kRounds);
    long long spread = 0;
    for (int k = 0; k < 7; ++k) {
        long long n = 0;
        ks.incr_by("counter" + std::to_string(k), 0, n);
        spread += n;
    }
    CHECK(spread == kThreads * kRounds);
}

TEST_CASE("MSET is atomic: a concurrent MGET never sees half of it", "[kvd][keyspace]")
{
    kvd_test::ManualClock clock;
    kvd::Keyspace ks(clock);
    // Keys spread over many stripes, so the write crosses locks.
    std::vector<std::string> names;
    for (int i = 0; i < 16; ++i) names.push_back("key:" + std::to_string(i));
    std::vector<std::string_view> keys(names.begin(), names.end());
    std::atomic<bool> done{false};
    std::thread writer([&] {
        for (int round = 0; round < 5000; ++round) {
            std::string value = std::to_string(round);
            std::vector<std::pair<std::string_view, std::string_view>> pairs;
            for (auto k : keys) pairs.emplace_back(k, value);
            ks.set_many(pairs);
        }
        done = true;
    });
    size_t torn = 0, reads = 0;
    while (!done) {
        std::vector<std::string> seen;
        ks.read_many(keys, [&](const std::string_view *v) { seen.emplace_back(v ? std::string(*v) : "-"); });
        ++reads;
        for (const auto &s : seen)
            if (s != seen[0]) ++torn;
    }
    writer.join();
    CHECK(reads > 0);
    CHECK(torn == 0);
}
