// SPDX-License-Identifier: MIT
// Randomized inputs through the whole request path (the libFuzzer target in
// tests/fuzz/kvd/fuzz_kvd_resp.cpp checks the same property with coverage guidance).
#include "fuzz_check.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>

namespace {

const char *const kWords[] = {
    "SET",     "GET",     "DEL",     "EXISTS", "INCR",    "DECR",     "INCRBY", "MSET",   "MGET",
    "EXPIRE",  "PEXPIRE", "TTL",     "PTTL",   "PERSIST", "PING",     "ECHO",   "DBSIZE", "FLUSHALL",
    "INFO",    "COMMAND", "DOCS",    "COUNT",  "CONFIG",  "QUIT",     "SELECT", "EX",     "PX",
    "NX",      "XX",      "KEEPTTL", "SADD",   "SPOP",    "SMEMBERS", "STRLEN", "MEMORY", "USAGE",
    "SAMPLES", "OBJECT",  "FREQ",    "k",      "key",     "0",        "-1",     "10",     "9223372036854775807",
    "",        "\"q u\"", "'x'"};

std::string random_request(std::mt19937_64 &rng)
{
    std::uniform_int_distribution<int> nargs(1, 5), word(0, sizeof kWords / sizeof *kWords - 1);
    std::vector<std::string> args;
    int n = nargs(rng);
    for (int i = 0; i < n; ++i) args.emplace_back(kWords[word(rng)]);
    if (rng() % 3 == 0) {
        std::string line;
        for (const auto &a : args) line += a + " ";
        return line + (rng() % 2 ? "\r\n" : "\n");
    }
    return kvd_test::encode(args);
}

std::string mutate(std::string s, std::mt19937_64 &rng)
{
    int edits = static_cast<int>(rng() % 4);
    for (int i = 0; i < edits && !s.empty(); ++i) {
        size_t at = rng() % s.size();
        switch (rng() % 4) {
        case 0:
            s[at] = static_cast<char>(rng());
            break;
        case 1:
            s.erase(at, 1 + rng() % 8);
            break;
        case 2:
            s.insert(at, std::string(1 + rng() % 4, static_cast<char>("*$\r\n9-0 \"'"[rng() % 11])));
            break;
        case 3:
            s.resize(at);
            break;
        }
    }
    return s;
}

} // namespace

TEST_CASE("random and mutated requests never break the session or its replies", "[kvd][fuzz]")
{
    std::mt19937_64 rng(20261122);
    for (int round = 0; round < 4000; ++round) {
        std::string input;
        if (round % 5 == 0) {
            size_t n = rng() % 300;
            for (size_t i = 0; i < n; ++i) input += static_cast<char>(rng());
        } else {
            int requests = 1 + static_cast<int>(rng() % 6);
            for (int i = 0; i < requests; ++i) input += random_request(rng);
            input = mutate(input, rng);
        }
        std::string broken = kvd_test::check_input(reinterpret_cast<const uint8_t *>(input.data()), input.size());
        INFO("round " << round << ", input: " << input << "\nproblem: " << broken);
        REQUIRE(broken.empty());
    }
}

// fuzz-kvd-resp found the first (tests/fuzz/kvd/regressions/spop-order-in-pieces):
// the two sessions it compares drew SPOP's picks from one engine per thread.
TEST_CASE("SPOP answers the same whether its requests come at once or in pieces", "[kvd][fuzz]")
{
    std::string input;
    for (int i = 0; i < 16; ++i) input += kvd_test::encode({"SADD", "s", "m" + std::to_string(i)});
    for (int i = 0; i < 6; ++i) input += "SPOP s\r\n";
    input += kvd_test::encode({"SPOP", "s", "3"}) + kvd_test::encode({"SMEMBERS", "s"});
    std::string broken = kvd_test::check_input(reinterpret_cast<const uint8_t *>(input.data()), input.size());
    INFO(broken);
    CHECK(broken.empty());
}

TEST_CASE("huge declared lengths and counts are refused, not allocated", "[kvd][fuzz]")
{
    for (const char *input :
         {"*2147483647\r\n", "*1\r\n$2147483647\r\n", "*9223372036854775807\r\n", "*1\r\n$999999999999999999\r\n"}) {
        INFO(input);
        CHECK(kvd_test::check_input(reinterpret_cast<const uint8_t *>(input), strlen(input)).empty());
        kvd_test::SessionFixture f;
        std::string out = f.feed(input);
        CHECK(f.outcome == kvd::Session::Outcome::Close);
        CHECK(out.rfind("-ERR Protocol error:", 0) == 0);
    }
}
