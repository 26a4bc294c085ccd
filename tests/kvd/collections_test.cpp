// SPDX-License-Identifier: MIT
// Lists, sets, hashes and sorted sets as Redis has them, WRONGTYPE between
// them and strings, and their replies under the reply limit.
#include "session_fixture.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

using kvd_test::is_error;
using kvd_test::is_int;
using kvd_test::SessionFixture;
using kvd_test::Value;
using T = kvd_test::Value::Type;

namespace {

const char *const kWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// The elements of an array reply as text ("?" marks a non-array).
std::vector<std::string> words(const Value &v)
{
    if (v.type != T::Array) return {"? " + v.text};
    std::vector<std::string> out;
    for (const Value &e : v.elements) out.push_back(e.type == T::NullBulk ? "(nil)" : e.text);
    return out;
}

std::vector<std::string> sorted(std::vector<std::string> v)
{
    std::sort(v.begin(), v.end());
    return v;
}

using W = std::vector<std::string>;

} // namespace

TEST_CASE("LPUSH and RPUSH build a list that LRANGE reads with Redis' index rules", "[kvd][lists]")
{
    SessionFixture f;
    CHECK(is_int(f.call({"RPUSH", "l", "b", "c"}), 2));
    CHECK(is_int(f.call({"LPUSH", "l", "a", "z"}), 4)); // each pushed in turn: z a b c
    CHECK(words(f.call({"LRANGE", "l", "0", "-1"})) == W{"z", "a", "b", "c"});
    CHECK(words(f.call({"LRANGE", "l", "1", "2"})) == W{"a", "b"});
    CHECK(words(f.call({"LRANGE", "l", "-2", "100"})) == W{"b", "c"});
    CHECK(words(f.call({"LRANGE", "l", "-100", "0"})) == W{"z"});
    CHECK(words(f.call({"LRANGE", "l", "3", "1"})).empty());
    CHECK(words(f.call({"LRANGE", "missing", "0", "-1"})).empty());
    CHECK(is_int(f.call({"LLEN", "l"}), 4));
    CHECK(is_error(f.call({"LRANGE", "l", "x", "1"}), "ERR value is not an integer or out of range"));
}

TEST_CASE("LPOP and RPOP take from either end, with a count, and delete the emptied list", "[kvd][lists]")
{
    SessionFixture f;
    f.call({"RPUSH", "l", "1", "2", "3", "4", "5"});
    CHECK(f.call({"LPOP", "l"}).text == "1");
    CHECK(f.call({"RPOP", "l"}).text == "5");
    CHECK(words(f.call({"LPOP", "l", "2"})) == W{"2", "3"});
    CHECK(words(f.call({"RPOP", "l", "10"})) == W{"4"});
    CHECK(f.call({"TYPE", "l"}).text == "none");
    CHECK(f.call({"LPOP", "l"}).type == T::NullBulk);
    CHECK(f.call({"LPOP", "l", "3"}).type == T::NullArray);
    CHECK(is_error(f.call({"LPOP", "l", "-1"}), "ERR value is out of range, must be positive"));
    CHECK(is_error(f.call({"LPOP", "l", "1", "2"}), "ERR wrong number of arguments for 'lpop' command"));
    CHECK(is_int(f.call({"DBSIZE"}), 0));
}

TEST_CASE("SADD, SREM, SISMEMBER, SCARD and SMEMBERS keep a set of distinct members", "[kvd][sets]")
{
    SessionFixture f;
    CHECK(is_int(f.call({"SADD", "s", "a", "b", "a"}), 2));
    CHECK(is_int(f.call({"SADD", "s", "b", "c"}), 1));
    CHECK(sorted(words(f.call({"SMEMBERS", "s"}))) == W{"a", "b", "c"});
    CHECK(is_int(f.call({"SISMEMBER", "s", "b"}), 1));
    CHECK(is_int(f.call({"SISMEMBER", "s", "x"}), 0));
    CHECK(is_int(f.call({"SREM", "s", "b", "x"}), 1));
    CHECK(is_int(f.call({"SCARD", "s"}), 2));
    CHECK(is_int(f.call({"SREM", "s", "a", "c"}), 2));
    CHECK(f.call({"TYPE", "s"}).text == "none");
}

TEST_CASE("SPOP removes random members, all of them at last, and deletes the set", "[kvd][sets]")
{
    SessionFixture f;
    std::vector<std::string> all;
    for (int i = 0; i < 50; ++i) {
        all.push_back("m" + std::to_string(i));
        f.call({"SADD", "s", all.back()});
    }
    std::vector<std::string> popped;
    popped.push_back(f.call({"SPOP", "s"}).text);
    for (const auto &w : words(f.call({"SPOP", "s", "9"}))) popped.push_back(w);
    CHECK(is_int(f.call({"SCARD", "s"}), 40));
    for (const auto &w : words(f.call({"SPOP", "s", "1000"}))) popped.push_back(w);
    CHECK(sorted(popped) == sorted(all));
    CHECK(f.call({"SPOP", "s"}).type == T::NullBulk);
    CHECK(words(f.call({"SPOP", "s", "2"})).empty());
    CHECK(is_int(f.call({"DBSIZE"}), 0));
}

TEST_CASE("SPOP picks by the keyspace's random seed: the same seed picks alike, another seed otherwise", "[kvd][sets]")
{
    auto picks = [](uint64_t seed) {
        SessionFixture f({}, seed);
        for (int i = 0; i < 32; ++i) f.call({"SADD", "s", "m" + std::to_string(i)});
        std::vector<std::string> popped;
        for (int i = 0; i < 8; ++i) popped.push_back(f.call({"SPOP", "s"}).text);
        for (const auto &w : words(f.call({"SPOP", "s", "8"}))) popped.push_back(w);
        return popped;
    };
    const std::vector<std::string> first = picks(7);
    CHECK(first.size() == 16);
    CHECK(picks(7) == first);
    // Another seed giving the same 16 picks out of 32 in order: about 1 in 10^22.
    CHECK(picks(8) != first);
}

TEST_CASE("HSET, HGET, HGETALL, HEXISTS, HDEL and HLEN keep a hash of fields", "[kvd][hashes]")
{
    SessionFixture f;
    CHECK(is_int(f.call({"HSET", "h", "a", "1", "b", "2"}), 2));
    CHECK(is_int(f.call({"HSET", "h", "a", "10", "c", "3"}), 1)); // a is overwritten, c is new
    CHECK(f.call({"HGET", "h", "a"}).text == "10");
    CHECK(f.call({"HGET", "h", "zz"}).type == T::NullBulk);
    CHECK(f.call({"HMSET", "h", "d", "4"}).text == "OK");
    Value all = f.call({"HGETALL", "h"});
    REQUIRE(all.elements.size() == 8);
    std::vector<std::string> pairs;
    for (size_t i = 0; i < 8; i += 2) pairs.push_back(all.elements[i].text + "=" + all.elements[i + 1].text);
    CHECK(sorted(pairs) == W{"a=10", "b=2", "c=3", "d=4"});
    CHECK(is_int(f.call({"HEXISTS", "h", "c"}), 1));
    CHECK(is_int(f.call({"HDEL", "h", "a", "b", "nope"}), 2));
    CHECK(is_int(f.call({"HLEN", "h"}), 2));
    CHECK(is_error(f.call({"HSET", "h", "a"}), "ERR wrong number of arguments for 'hset' command"));
    CHECK(is_error(f.call({"HSET", "h", "a", "1", "b"}), "ERR wrong number of arguments for 'hset' command"));
}

TEST_CASE("ZADD orders members by score then bytes; ZPOPMIN, ZRANGE and ZSCORE read them", "[kvd][zsets]")
{
    SessionFixture f;
    CHECK(is_int(f.call({"ZADD", "z", "2", "b", "1", "c", "2", "a"}), 3));
    CHECK(words(f.call({"ZRANGE", "z", "0", "-1"})) == W{"c", "a", "b"});
    CHECK(is_int(f.call({"ZADD", "z", "0.1", "b"}), 0)); // moved, not added
    CHECK(words(f.call({"ZRANGE", "z", "0", "1", "WITHSCORES"})) == W{"b", "0.10000000000000001", "c", "1"});
    CHECK(f.call({"ZSCORE", "z", "a"}).text == "2");
    CHECK(f.call({"ZSCORE", "z", "nope"}).type == T::NullBulk);
    CHECK(is_int(f.call({"ZADD", "z", "-inf", "low", "+inf", "high"}), 2));
    CHECK(words(f.call({"ZPOPMIN", "z"})) == W{"low", "-inf"});
    CHECK(words(f.call({"ZPOPMIN", "z", "2"})) == W{"b", "0.10000000000000001", "c", "1"});
    CHECK(is_int(f.call({"ZCARD", "z"}), 2));
    CHECK(is_int(f.call({"ZREM", "z", "a", "high"}), 2));
    CHECK(f.call({"TYPE", "z"}).text == "none");
    CHECK(words(f.call({"ZPOPMIN", "z"})).empty());
    CHECK(is_error(f.call({"ZADD", "z", "nan", "m"}), "ERR value is not a valid float"));
    CHECK(is_error(f.call({"ZADD", "z", "1x", "m"}), "ERR value is not a valid float"));
    CHECK(is_error(f.call({"ZADD", "z", "1", "m", "2"}), "ERR syntax error"));
    CHECK(is_int(f.call({"DBSIZE"}), 0)); // refused ZADDs created nothing
}

TEST_CASE("ZADD reads a score as redis-server 7 does: out of range or blank-led is not a valid float, inf is",
          "[kvd][zsets]")
{
    // Checked against redis-server 7.0.15 (same_replies_as_redis.py compares them live).
    SessionFixture f;
    for (const char *bad : {"1e400", "-1e400", "1e-400", "nan", " 1", "\n1", "\v1", "1 ", "", "x"}) {
        CAPTURE(bad);
        CHECK(is_error(f.call({"ZADD", "z", bad, "m"}), "ERR value is not a valid float"));
    }
    CHECK(is_error(f.call({"ZADD", "z", std::string("1\0", 2), "m"}), "ERR value is not a valid float"));
    CHECK(is_int(f.call({"DBSIZE"}), 0));
    CHECK(is_int(f.call({"ZADD", "z", "inf", "a", "-infinity", "b", "4.9e-324", "c", "0x10", "d"}), 4));
    CHECK(is_int(f.call({"ZADD", "z", "1" + std::string(300, '0'), "e"}), 1)); // 1e300: long, in range
    CHECK(f.call({"ZSCORE", "z", "a"}).text == "inf");
    CHECK(f.call({"ZSCORE", "z", "c"}).text == "4.9406564584124654e-324");
    CHECK(f.call({"ZSCORE", "z", "d"}).text == "16");
}

TEST_CASE("a key of one type answers WRONGTYPE to another type's commands; SET replaces any type", "[kvd][types]")
{
    SessionFixture f;
    f.call({"RPUSH", "list", "x"});
    f.call({"SET", "str", "1"});
    f.call({"HSET", "hash", "f", "v"});
    CHECK(is_error(f.call({"GET", "list"}), kWrongType));
    CHECK(is_error(f.call({"INCR", "hash"}), kWrongType));
    CHECK(is_error(f.call({"LPUSH", "str", "x"}), kWrongType));
    CHECK(is_error(f.call({"SADD", "list", "x"}), kWrongType));
    CHECK(is_error(f.call({"HGET", "list", "f"}), kWrongType));
    CHECK(is_error(f.call({"ZADD", "hash", "1", "m"}), kWrongType));
    CHECK(is_error(f.call({"LRANGE", "hash", "0", "-1"}), kWrongType));
    CHECK(is_error(f.call({"GETSET", "list", "v"}), kWrongType));
    CHECK(is_error(f.call({"GETDEL", "hash"}), kWrongType));
    CHECK(words(f.call({"MGET", "str", "list"})) == W{"1", "(nil)"});
    CHECK(f.call({"TYPE", "list"}).text == "list");
    CHECK(f.call({"TYPE", "str"}).text == "string");
    CHECK(f.call({"TYPE", "hash"}).text == "hash");
    CHECK(f.call({"SET", "list", "now a string"}).text == "OK");
    CHECK(f.call({"GET", "list"}).text == "now a string");
    CHECK(is_int(f.call({"DEL", "hash", "list"}), 2));
}

TEST_CASE("an LRANGE or HGETALL past the reply limit is stopped while it is built, and LPOP then pops nothing",
          "[kvd][lists][limits]")
{
    kvd::RequestLimits limits;
    limits.max_reply = 1u << 20;
    SessionFixture f(limits);
    const std::string element(1000, 'e');
    std::vector<std::string> push{"RPUSH", "l"};
    for (int i = 0; i < 5000; ++i) push.push_back(element); // 5 MB of list
    f.input.append(kvd_test::encode(push));
    f.drain_replies();
    std::string out;
    f.input.append(kvd_test::encode({"LRANGE", "l", "0", "-1"}) + kvd_test::encode({"LPOP", "l", "5000"}) +
                   kvd_test::encode({"LLEN", "l"}));
    size_t peak = 0;
    for (;;) {
        f.outcome = f.session.feed(f.input, out, 1u << 20);
        peak = std::max(peak, out.capacity());
        if (f.outcome != kvd::Session::Outcome::Backlogged) break;
    }
    std::vector<Value> replies;
    REQUIRE(kvd_test::parse_all(out, replies));
    REQUIRE(replies.size() == 3);
    CHECK(replies[0].text == "ERR reply to 'lrange' exceeds the reply limit of 1048576 bytes (write_buffer_limit); "
                             "nothing was sent");
    CHECK(replies[1].text == "ERR reply to 'lpop' exceeds the reply limit of 1048576 bytes (write_buffer_limit); "
                             "nothing was sent");
    CHECK(is_int(replies[2], 5000)); // the refused LPOP lost nothing
    CHECK(peak <= 4u << 20);
}

TEST_CASE("GETSET, GETDEL, SETNX, SETEX and PSETEX", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(f.call({"GETSET", "k", "1"}).type == T::NullBulk);
    f.call({"EXPIRE", "k", "100"});
    CHECK(f.call({"GETSET", "k", "2"}).text == "1");
    CHECK(is_int(f.call({"TTL", "k"}), -1)); // GETSET drops the expiry
    CHECK(f.call({"GETDEL", "k"}).text == "2");
    CHECK(f.call({"GETDEL", "k"}).type == T::NullBulk);
    CHECK(is_int(f.call({"SETNX", "k", "a"}), 1));
    CHECK(is_int(f.call({"SETNX", "k", "b"}), 0));
    CHECK(f.call({"GET", "k"}).text == "a");
    CHECK(f.call({"SETEX", "e", "10", "v"}).text == "OK");
    CHECK(is_int(f.call({"TTL", "e"}), 10));
    CHECK(f.call({"PSETEX", "p", "1500", "v"}).text == "OK");
    CHECK(is_int(f.call({"PTTL", "p"}), 1500));
    CHECK(is_error(f.call({"SETEX", "e", "0", "v"}), "ERR invalid expire time in 'setex' command"));
    CHECK(is_error(f.call({"SETEX", "e", "ten", "v"}), "ERR value is not an integer or out of range"));
    CHECK(is_int(f.call({"UNLINK", "k", "e", "missing"}), 2));
}

TEST_CASE("KEYS matches Redis glob patterns; TYPE names every kind of value", "[kvd][keys]")
{
    SessionFixture f;
    for (const char *k : {"user:1", "user:2", "user:10", "order:1", "u*x", "hello", "hallo", "hxllo"})
        f.call({"SET", k, "v"});
    CHECK(sorted(words(f.call({"KEYS", "user:*"}))) == W{"user:1", "user:10", "user:2"});
    CHECK(sorted(words(f.call({"KEYS", "user:?"}))) == W{"user:1", "user:2"});
    CHECK(sorted(words(f.call({"KEYS", "h[ae]llo"}))) == W{"hallo", "hello"});
    CHECK(sorted(words(f.call({"KEYS", "h[^e]llo"}))) == W{"hallo", "hxllo"});
    CHECK(sorted(words(f.call({"KEYS", "h[a-f]llo"}))) == W{"hallo", "hello"});
    CHECK(words(f.call({"KEYS", "u\\*x"})) == W{"u*x"});
    CHECK(words(f.call({"KEYS", "*"})).size() == 8);
    CHECK(words(f.call({"KEYS", "USER:*"})).empty()); // case matters, as in Redis
    f.clock.now += 0;
    f.call({"PSETEX", "gone", "10", "v"});
    f.clock.now += 10;
    CHECK(words(f.call({"KEYS", "gone"})).empty()); // expired keys are not listed
}

TEST_CASE("SCAN returns every key present for the whole scan exactly once, while keys come and go", "[kvd][keys]")
{
    SessionFixture f;
    std::vector<std::string> stable;
    for (int i = 0; i < 2000; ++i) {
        stable.push_back("k" + std::to_string(i));
        f.call({"SET", stable.back(), "v"});
    }
    std::vector<std::string> seen;
    std::string cursor = "0";
    int calls = 0, churn = 0;
    do {
        Value v = f.call({"SCAN", cursor, "COUNT", "37"});
        REQUIRE(v.type == T::Array);
        REQUIRE(v.elements.size() == 2);
        cursor = v.elements[0].text;
        for (const Value &k : v.elements[1].elements)
            if (k.text[0] == 'k') seen.push_back(k.text);
        // Between calls: new keys (enough to grow the tables) and deleted ones.
        for (int i = 0; i < 50; ++i) f.call({"SET", "churn" + std::to_string(churn++), "v"});
        f.call({"DEL", "churn" + std::to_string(churn - 70)});
        ++calls;
    } while (cursor != "0" && calls < 10000);
    CHECK(cursor == "0");
    CHECK(sorted(seen) == sorted(stable));
    CHECK(calls > 2000 / 37 / 2);
}

TEST_CASE("SCAN filters by MATCH and TYPE and refuses bad arguments", "[kvd][keys]")
{
    SessionFixture f;
    f.call({"SET", "s:1", "v"});
    f.call({"RPUSH", "l:1", "v"});
    f.call({"RPUSH", "l:2", "v"});
    Value v = f.call({"SCAN", "0", "COUNT", "1000", "TYPE", "list"});
    CHECK(v.elements[0].text == "0");
    CHECK(sorted(words(v.elements[1])) == W{"l:1", "l:2"});
    v = f.call({"SCAN", "0", "MATCH", "s:*", "COUNT", "1000"});
    CHECK(words(v.elements[1]) == W{"s:1"});
    CHECK(is_error(f.call({"SCAN", "x"}), "ERR invalid cursor"));
    CHECK(is_error(f.call({"SCAN", "0", "COUNT", "0"}), "ERR syntax error"));
    CHECK(is_error(f.call({"SCAN", "0", "MATCH"}), "ERR syntax error"));
}

TEST_CASE("MULTI queues commands and EXEC runs them, replying with every reply in one array", "[kvd][transactions]")
{
    SessionFixture f;
    CHECK(f.call({"MULTI"}).text == "OK");
    CHECK(f.call({"SET", "a", "1"}).text == "QUEUED");
    CHECK(f.call({"INCR", "a"}).text == "QUEUED");
    CHECK(f.call({"LPUSH", "a", "x"}).text == "QUEUED"); // fails only when it runs
    CHECK(is_error(f.call({"MULTI"}), "ERR MULTI calls can not be nested"));
    CHECK(f.call({"GET", "b"}).text == "QUEUED");
    Value v = f.call({"EXEC"});
    REQUIRE(v.type == T::Array);
    REQUIRE(v.elements.size() == 4);
    CHECK(v.elements[0].text == "OK");
    CHECK(is_int(v.elements[1], 2));
    CHECK(is_error(v.elements[2], kWrongType));
    CHECK(v.elements[3].type == T::NullBulk);
    CHECK(is_error(f.call({"EXEC"}), "ERR EXEC without MULTI"));
    CHECK(is_error(f.call({"DISCARD"}), "ERR DISCARD without MULTI"));
}

TEST_CASE("DISCARD drops the queue; a command refused while queueing makes EXEC answer EXECABORT",
          "[kvd][transactions]")
{
    SessionFixture f;
    f.call({"MULTI"});
    f.call({"SET", "a", "1"});
    CHECK(f.call({"DISCARD"}).text == "OK");
    CHECK(f.call({"GET", "a"}).type == T::NullBulk);
    f.call({"MULTI"});
    f.call({"SET", "a", "1"});
    CHECK(is_error(f.call({"GET"}), "ERR wrong number of arguments for 'get' command"));
    CHECK(f.call({"NOSUCHCOMMAND"}).type == T::Error);
    CHECK(is_error(f.call({"EXEC"}), "EXECABORT Transaction discarded because of previous errors."));
    CHECK(f.call({"GET", "a"}).type == T::NullBulk);
}

TEST_CASE("EXEC after WATCH runs nothing when a watched key changed, and runs when none did", "[kvd][transactions]")
{
    SessionFixture f;
    kvd::SessionCounters counters; // a second client on the same keyspace
    kvd::Session second(f.keyspace, f.host, kvd::RequestLimits{}, counters);
    f.call({"SET", "balance", "10"});
    CHECK(f.call({"WATCH", "balance"}).text == "OK");
    // The other client changes the key between WATCH and EXEC.
    twinwire::Buffer in;
    in.append(kvd_test::encode({"INCR", "balance"}));
    std::string out;
    second.feed(in, out, 1u << 20);
    CHECK(out == ":11\r\n");
    f.call({"MULTI"});
    f.call({"SET", "balance", "0"});
    CHECK(f.call({"EXEC"}).type == T::NullArray);
    CHECK(f.call({"GET", "balance"}).text == "11");
    // Watched again, unchanged: it runs.
    f.call({"WATCH", "balance"});
    f.call({"MULTI"});
    f.call({"SET", "balance", "0"});
    CHECK(words(f.call({"EXEC"})) == W{"OK"});
    CHECK(f.call({"GET", "balance"}).text == "0");
    CHECK(f.call({"MULTI"}).text == "OK");
    CHECK(is_error(f.call({"WATCH", "x"}), "ERR WATCH inside MULTI is not allowed"));
    CHECK(f.call({"DISCARD"}).text == "OK");
}

TEST_CASE("the commands queued since MULTI count against max_request_size", "[kvd][transactions][limits]")
{
    kvd::RequestLimits limits;
    limits.max_request = 64u << 10;
    SessionFixture f(limits);
    f.call({"MULTI"});
    const std::string value(16u << 10, 'v');
    CHECK(f.call({"SET", "a", value}).text == "QUEUED");
    CHECK(f.call({"SET", "b", value}).text == "QUEUED");
    CHECK(f.call({"SET", "c", value}).text == "QUEUED");
    CHECK(is_error(f.call({"SET", "d", value}),
                   "ERR the commands queued since MULTI exceed max_request_size (65536 bytes)"));
    CHECK(is_error(f.call({"EXEC"}), "EXECABORT Transaction discarded because of previous errors."));
    CHECK(is_int(f.call({"DBSIZE"}), 0));
}

TEST_CASE("CLIENT SETNAME, GETNAME and ID", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(f.call({"CLIENT", "GETNAME"}).type == T::NullBulk);
    CHECK(f.call({"CLIENT", "SETNAME", "worker-1"}).text == "OK");
    CHECK(f.call({"CLIENT", "GETNAME"}).text == "worker-1");
    CHECK(is_error(f.call({"CLIENT", "SETNAME", "two words"}),
                   "ERR Client names cannot contain spaces, newlines or special characters."));
    CHECK(f.call({"CLIENT", "ID"}).type == T::Integer);
    CHECK(f.call({"CLIENT", "NOPE"}).type == T::Error);
}

namespace {

/// INFO, run inside a transaction, lets another thread try a write and
/// waits up to 300 ms for it to finish: it finishes only if nothing holds
/// it back while EXEC runs.
class PausingHost : public kvd_test::FixedHost {
public:
    std::atomic<bool> inside{false}, other_done{false};
    std::string info(const std::vector<std::string_view> &sections, const kvd::Session &caller) override
    {
        inside = true;
        for (int i = 0; i < 300 && !other_done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return FixedHost::info(sections, caller);
    }
};

std::string run(kvd::Session &session, const std::vector<std::string> &words)
{
    twinwire::Buffer in;
    in.append(kvd_test::encode(words));
    std::string out;
    session.feed(in, out, 1u << 20);
    return out;
}

} // namespace

TEST_CASE("EXEC runs its commands with no other loop thread's command among them", "[kvd][transactions]")
{
    SessionFixture f;
    PausingHost host;
    kvd::SessionCounters counters;
    kvd::Session mine(f.keyspace, host, kvd::RequestLimits{}, counters), theirs(f.keyspace, host, {}, counters);
    mine.lane = 0;
    theirs.lane = 1; // another loop
    std::thread other([&] {
        while (!host.inside) std::this_thread::yield();
        run(theirs, {"SET", "x", "theirs"}); // during EXEC: must wait for it
        host.other_done = true;
    });
    run(mine, {"MULTI"});
    run(mine, {"SET", "x", "mine"});
    run(mine, {"INFO"});
    run(mine, {"GET", "x"});
    std::string reply = run(mine, {"EXEC"});
    other.join();
    std::vector<Value> v;
    REQUIRE(kvd_test::parse_all(reply, v));
    REQUIRE(v.size() == 1);
    REQUIRE(v[0].elements.size() == 3);
    CHECK(v[0].elements[2].text == "mine");
    CHECK(f.call({"GET", "x"}).text == "theirs"); // it ran after EXEC
}

TEST_CASE("a set that shrank gives back its buckets before SPOP picks at random", "[kvd][sets]")
{
    kvd::Set set;
    std::vector<std::string> names;
    for (int i = 0; i < 100000; ++i) names.push_back(std::to_string(i));
    set.add(std::vector<std::string_view>(names.begin(), names.end()));
    std::minstd_rand random(1);
    for (int i = 0; i < 99990; ++i) set.pop_random(random);
    REQUIRE(set.members.bucket_count() > 50000); // what a random pick would probe
    set.compact();
    CHECK(set.members.bucket_count() < 100);
    std::set<std::string> left;
    while (!set.empty()) left.insert(set.pop_random(random).value());
    CHECK(left.size() == 10);
}
