// SPDX-License-Identifier: MIT
// MEMORY USAGE and OBJECT FREQ, what redis-cli's --memkeys and --hotkeys ask of every key.
#include "session_fixture.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using kvd_test::is_error;
using kvd_test::SessionFixture;
using kvd_test::Value;
using T = kvd_test::Value::Type;

namespace {

/// MEMORY USAGE key [SAMPLES samples] as a number; -1 for anything but an integer reply.
long long usage(SessionFixture &f, const std::string &key, const char *samples = nullptr)
{
    Value v = samples ? f.call({"MEMORY", "USAGE", key, "SAMPLES", samples}) : f.call({"MEMORY", "USAGE", key});
    return v.type == T::Integer ? v.integer : -1;
}

/// Fill `key` of `type` with `n` elements of `bytes` + 5 bytes each.
void fill(SessionFixture &f, const std::string &type, const std::string &key, int n, size_t bytes)
{
    for (int i = 0; i < n; ++i) {
        std::string number = std::to_string(i);
        std::string element = std::string(4 - number.size(), '0') + number + ":" + std::string(bytes, 'e');
        if (type == "list") f.call({"RPUSH", key, element});
        else if (type == "set") f.call({"SADD", key, element});
        else if (type == "hash") f.call({"HSET", key, element, element});
        else f.call({"ZADD", key, std::to_string(i), element});
    }
}

} // namespace

TEST_CASE("MEMORY USAGE answers nil for a missing or expired key, and counts a string's bytes", "[kvd][memory]")
{
    SessionFixture f;
    CHECK(f.call({"MEMORY", "USAGE", "nothing"}).type == T::NullBulk);
    f.call({"SET", "small", "v"});
    f.call({"SET", "large", std::string(100000, 'x'), "PX", "10"});
    long long small = usage(f, "small"), large = usage(f, "large");
    CHECK(small > 0);
    CHECK(large >= small + 100000);
    CHECK(large < small + 100000 + 1024); // an estimate, not a multiple
    f.clock.now += 10;
    CHECK(f.call({"MEMORY", "USAGE", "large"}).type == T::NullBulk);
}

TEST_CASE("MEMORY USAGE of a collection grows with its elements and their bytes, for every type", "[kvd][memory]")
{
    for (std::string type : {"list", "set", "hash", "zset"}) {
        SECTION(type)
        {
            SessionFixture f;
            fill(f, type, "few", 10, 40);
            fill(f, type, "many", 1000, 40);
            fill(f, type, "long", 10, 4000);
            long long few = usage(f, "few", "0"), many = usage(f, "many", "0"), longer = usage(f, "long", "0");
            INFO(type << ": few " << few << ", many " << many << ", long " << longer);
            CHECK(few > 10 * 40);
            CHECK(many > 1000 * 40);
            CHECK(many > 50 * few);
            CHECK(longer > 10 * 4000);
        }
    }
}

TEST_CASE("MEMORY USAGE samples 5 elements by default and scales; SAMPLES 0 measures every one", "[kvd][memory]")
{
    SessionFixture f;
    // Five short elements first, then long ones: the default sample sees only the short ones.
    for (int i = 0; i < 5; ++i) f.call({"RPUSH", "l", "s"});
    for (int i = 0; i < 95; ++i) f.call({"RPUSH", "l", std::string(1000, 'L')});
    long long sampled = usage(f, "l"), whole = usage(f, "l", "0");
    CHECK(whole > 95 * 1000);
    CHECK(sampled < whole / 10);
    CHECK(usage(f, "l", "100") == whole);
    CHECK(usage(f, "l", "1000000") == whole);
    // Alike elements: the sample's average is every element's.
    fill(f, "hash", "h", 200, 100);
    long long h_sampled = usage(f, "h"), h_whole = usage(f, "h", "0");
    CHECK(h_sampled <= h_whole + 1);
    CHECK(h_sampled >= h_whole - 1);
}

TEST_CASE("MEMORY refuses what Redis refuses, and names USAGE as the one subcommand it has", "[kvd][memory]")
{
    SessionFixture f;
    f.call({"SET", "k", "v"});
    CHECK(is_error(f.call({"MEMORY", "USAGE", "k", "SAMPLES", "-1"}), "ERR syntax error"));
    CHECK(is_error(f.call({"MEMORY", "USAGE", "k", "SAMPLES", "x"}), "ERR value is not an integer or out of range"));
    CHECK(is_error(f.call({"MEMORY", "USAGE", "k", "SAMPLES"}), "ERR syntax error"));
    CHECK(is_error(f.call({"MEMORY", "USAGE", "k", "OTHER", "1"}), "ERR syntax error"));
    CHECK(is_error(f.call({"MEMORY", "USAGE"}), "ERR wrong number of arguments for 'memory|usage' command"));
    CHECK(is_error(f.call({"MEMORY"}), "ERR wrong number of arguments for 'memory' command"));
    CHECK(is_error(f.call({"MEMORY", "DOCTOR"}),
                   "ERR unknown subcommand 'DOCTOR'. twinwire-kvd's MEMORY has USAGE only."));
}

TEST_CASE("OBJECT FREQ answers nil for a missing key and, for any other, Redis' error without an LFU policy",
          "[kvd][memory]")
{
    SessionFixture f;
    CHECK(f.call({"OBJECT", "FREQ", "k"}).type == T::NullBulk);
    const std::string no_lfu =
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching "
        "between policies at runtime LRU and LFU data will take some time to adjust.";
    f.call({"SET", "k", "v"});
    f.call({"SADD", "s", "m"});
    CHECK(is_error(f.call({"OBJECT", "FREQ", "k"}), no_lfu));
    CHECK(is_error(f.call({"object", "freq", "s"}), no_lfu));
    CHECK(is_error(f.call({"OBJECT", "FREQ", "k", "s"}), "ERR wrong number of arguments for 'object|freq' command"));
    CHECK(is_error(f.call({"OBJECT", "ENCODING", "k"}),
                   "ERR unknown subcommand 'ENCODING'. twinwire-kvd's OBJECT has FREQ only."));
}
