// SPDX-License-Identifier: MIT
// What each command does, including expiry, with the clock under the test's control.
#include "session_fixture.hpp"

#include <catch2/catch.hpp>

using kvd_test::is_bulk;
using kvd_test::is_error;
using kvd_test::is_int;
using kvd_test::is_ok;
using kvd_test::SessionFixture;
using kvd_test::Value;
using T = kvd_test::Value::Type;

TEST_CASE("PING answers PONG, or echoes its argument", "[kvd][commands]")
{
    SessionFixture f;
    Value v = f.call({"PING"});
    CHECK((v.type == T::Status && v.text == "PONG"));
    CHECK(is_bulk(f.call({"ping", "hello"}), "hello"));
    CHECK(is_error(f.call({"PING", "a", "b"}), "ERR wrong number of arguments for 'ping' command"));
}

TEST_CASE("ECHO returns its argument byte for byte", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(is_bulk(f.call({"ECHO", std::string("a\0b\r\n", 5)}), std::string("a\0b\r\n", 5)));
    CHECK(is_error(f.call({"ECHO"}), "ERR wrong number of arguments for 'echo' command"));
}

TEST_CASE("command names are matched in any letter case", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(is_ok(f.call({"sEt", "k", "v"})));
    CHECK(is_bulk(f.call({"GeT", "k"}), "v"));
}

TEST_CASE("an unknown command gets an error naming it and its first arguments", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(is_error(f.call({"FROB", "a", "b"}), "ERR unknown command 'FROB', with args beginning with: 'a' 'b' "));
    CHECK(is_error(f.call({std::string(300, 'z')}),
                   "ERR unknown command '" + std::string(128, 'z') + "', with args beginning with: "));
}

TEST_CASE("SET stores, GET reads, a missing key reads as nil", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(f.call({"GET", "k"}).type == T::NullBulk);
    CHECK(is_ok(f.call({"SET", "k", "v1"})));
    CHECK(is_bulk(f.call({"GET", "k"}), "v1"));
    CHECK(is_ok(f.call({"SET", "k", "v2"})));
    CHECK(is_bulk(f.call({"GET", "k"}), "v2"));
    CHECK(is_error(f.call({"GET", "a", "b"}), "ERR wrong number of arguments for 'get' command"));
}

TEST_CASE("SET NX writes only a missing key, XX only an existing one", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(f.call({"SET", "k", "v", "XX"}).type == T::NullBulk);
    CHECK(f.call({"GET", "k"}).type == T::NullBulk);
    CHECK(is_ok(f.call({"SET", "k", "v", "NX"})));
    CHECK(f.call({"SET", "k", "other", "nx"}).type == T::NullBulk);
    CHECK(is_bulk(f.call({"GET", "k"}), "v"));
    CHECK(is_ok(f.call({"SET", "k", "w", "xx"})));
    CHECK(is_bulk(f.call({"GET", "k"}), "w"));
    CHECK(is_error(f.call({"SET", "k", "v", "NX", "XX"}), "ERR syntax error"));
}

TEST_CASE("SET EX and PX expire the key, on access and by the sweep", "[kvd][commands][expiry]")
{
    SessionFixture f;
    CHECK(is_ok(f.call({"SET", "s", "v", "EX", "10"})));
    CHECK(is_ok(f.call({"SET", "m", "v", "px", "1500"})));
    CHECK(is_int(f.call({"TTL", "s"}), 10));
    CHECK(is_int(f.call({"PTTL", "m"}), 1500));
    f.clock.now += 1499;
    CHECK(is_bulk(f.call({"GET", "m"}), "v"));
    f.clock.now += 1;
    CHECK(f.call({"GET", "m"}).type == T::NullBulk); // lazily, on access
    CHECK(is_int(f.call({"DBSIZE"}), 1));
    f.clock.now += 8500;
    CHECK(f.keyspace.size() == 1);     // expired but not yet touched
    CHECK(f.keyspace.sweep(100) == 1); // the active sweep deletes it
    CHECK(f.keyspace.size() == 0);
    CHECK(f.keyspace.expired_total() == 2);
}

TEST_CASE("SET without an expiry clears an old one; KEEPTTL keeps it", "[kvd][commands][expiry]")
{
    SessionFixture f;
    f.call({"SET", "k", "v", "EX", "100"});
    CHECK(is_ok(f.call({"SET", "k", "v2", "KEEPTTL"})));
    CHECK(is_int(f.call({"TTL", "k"}), 100));
    CHECK(is_ok(f.call({"SET", "k", "v3"})));
    CHECK(is_int(f.call({"TTL", "k"}), -1));
    CHECK(f.keyspace.volatile_size() == 0);
}

TEST_CASE("SET refuses bad expiries and option mixes", "[kvd][commands][expiry]")
{
    SessionFixture f;
    CHECK(is_error(f.call({"SET", "k", "v", "EX", "0"}), "ERR invalid expire time in 'set' command"));
    CHECK(is_error(f.call({"SET", "k", "v", "PX", "-5"}), "ERR invalid expire time in 'set' command"));
    CHECK(is_error(f.call({"SET", "k", "v", "EX", "ten"}), "ERR value is not an integer or out of range"));
    CHECK(is_error(f.call({"SET", "k", "v", "EX", "9223372036854775807"}), "ERR invalid expire time in 'set' command"));
    CHECK(is_error(f.call({"SET", "k", "v", "EX"}), "ERR syntax error"));
    CHECK(is_error(f.call({"SET", "k", "v", "EX", "1", "PX", "1"}), "ERR syntax error"));
    CHECK(is_error(f.call({"SET", "k", "v", "KEEPTTL", "EX", "1"}), "ERR syntax error"));
    CHECK(is_error(f.call({"SET", "k", "v", "BOGUS"}), "ERR syntax error"));
    CHECK(f.call({"GET", "k"}).type == T::NullBulk); // nothing was stored by a refused SET
}

TEST_CASE("EXPIRE, PEXPIRE, TTL, PTTL and PERSIST", "[kvd][commands][expiry]")
{
    SessionFixture f;
    CHECK(is_int(f.call({"EXPIRE", "missing", "10"}), 0));
    CHECK(is_int(f.call({"TTL", "missing"}), -2));
    f.call({"SET", "k", "v"});
    CHECK(is_int(f.call({"TTL", "k"}), -1));
    CHECK(is_int(f.call({"EXPIRE", "k", "10"}), 1));
    f.clock.now += 2400;
    CHECK(is_int(f.call({"TTL", "k"}), 8)); // 7.6 s rounds to 8, as Redis does
    CHECK(is_int(f.call({"PTTL", "k"}), 7600));
    CHECK(is_int(f.call({"PERSIST", "k"}), 1));
    CHECK(is_int(f.call({"PERSIST", "k"}), 0));
    CHECK(is_int(f.call({"TTL", "k"}), -1));
    CHECK(is_int(f.call({"PEXPIRE", "k", "50"}), 1));
    f.clock.now += 50;
    CHECK(is_int(f.call({"EXISTS", "k"}), 0));
    CHECK(is_error(f.call({"EXPIRE", "k", "soon"}), "ERR value is not an integer or out of range"));
}

TEST_CASE("EXPIRE with a time in the past deletes the key", "[kvd][commands][expiry]")
{
    SessionFixture f;
    f.call({"SET", "k", "v"});
    CHECK(is_int(f.call({"EXPIRE", "k", "-1"}), 1));
    CHECK(is_int(f.call({"EXISTS", "k"}), 0));
}

TEST_CASE("a key given a new expiry many times leaves no pile of stale records", "[kvd][commands][expiry]")
{
    SessionFixture f;
    f.call({"SET", "k", "v"});
    // Each EXPIRE leaves the previous (earlier) record stale in the heap.
    for (int i = 1; i <= 20000; ++i) f.call({"EXPIRE", "k", std::to_string(i)});
    f.clock.now += 20000 * 1000;
    // Without compaction the first 5000 records would all be stale ones.
    CHECK(f.keyspace.sweep(5000) == 1);
    CHECK(f.keyspace.size() == 0);
}

TEST_CASE("INCR, DECR, INCRBY and DECRBY count on decimal values", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(is_int(f.call({"INCR", "n"}), 1));
    CHECK(is_int(f.call({"INCRBY", "n", "41"}), 42));
    CHECK(is_int(f.call({"DECR", "n"}), 41));
    CHECK(is_int(f.call({"DECRBY", "n", "50"}), -9));
    CHECK(is_bulk(f.call({"GET", "n"}), "-9"));
    f.call({"SET", "n", "9223372036854775806"});
    CHECK(is_int(f.call({"INCR", "n"}), 9223372036854775807LL));
    CHECK(is_error(f.call({"INCR", "n"}), "ERR increment or decrement would overflow"));
    CHECK(is_bulk(f.call({"GET", "n"}), "9223372036854775807"));
}

TEST_CASE("INCR refuses values that are not strict integers", "[kvd][commands]")
{
    SessionFixture f;
    for (const char *bad : {"abc", " 1", "1 ", "+1", "01", "-0", "", "1.5", "99999999999999999999"}) {
        f.call({"SET", "n", bad});
        INFO("value '" << bad << "'");
        CHECK(is_error(f.call({"INCR", "n"}), "ERR value is not an integer or out of range"));
        CHECK(is_bulk(f.call({"GET", "n"}), bad));
    }
    CHECK(is_error(f.call({"INCRBY", "m", "x"}), "ERR value is not an integer or out of range"));
    CHECK(is_error(f.call({"DECRBY", "m", "-9223372036854775808"}), "ERR decrement would overflow"));
}

TEST_CASE("INCR keeps the key's expiry", "[kvd][commands][expiry]")
{
    SessionFixture f;
    f.call({"SET", "n", "1", "EX", "100"});
    f.call({"INCR", "n"});
    CHECK(is_int(f.call({"TTL", "n"}), 100));
}

TEST_CASE("STRLEN answers a string's length in bytes, 0 for a missing or expired key, WRONGTYPE for a list",
          "[kvd][commands]")
{
    SessionFixture f;
    CHECK(is_int(f.call({"STRLEN", "s"}), 0));
    f.call({"SET", "s", std::string("a\0b\r\n", 5)});
    CHECK(is_int(f.call({"STRLEN", "s"}), 5));
    f.call({"SET", "s", std::string(100000, 'x'), "PX", "10"});
    CHECK(is_int(f.call({"STRLEN", "s"}), 100000));
    f.clock.now += 10;
    CHECK(is_int(f.call({"STRLEN", "s"}), 0));
    f.call({"INCRBY", "n", "-123"});
    CHECK(is_int(f.call({"STRLEN", "n"}), 4)); // the decimal text, as Redis counts an integer
    f.call({"RPUSH", "l", "abc"});
    CHECK(is_error(f.call({"STRLEN", "l"}), "WRONGTYPE Operation against a key holding the wrong kind of value"));
    CHECK(is_error(f.call({"STRLEN", "s", "t"}), "ERR wrong number of arguments for 'strlen' command"));
}

TEST_CASE("DEL and EXISTS count keys, EXISTS counting repeats", "[kvd][commands]")
{
    SessionFixture f;
    f.call({"MSET", "a", "1", "b", "2", "c", "3"});
    CHECK(is_int(f.call({"EXISTS", "a", "a", "b", "zz"}), 3));
    CHECK(is_int(f.call({"DEL", "a", "a", "zz"}), 1));
    CHECK(is_int(f.call({"DEL", "b"}), 1));
    CHECK(is_int(f.call({"DEL", "b"}), 0));
    CHECK(is_int(f.call({"EXISTS", "c"}), 1));
    CHECK(is_error(f.call({"DEL"}), "ERR wrong number of arguments for 'del' command"));
}

TEST_CASE("MSET sets pairs, MGET reads them with nil for missing keys", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(is_ok(f.call({"MSET", "a", "1", "b", "2"})));
    Value v = f.call({"MGET", "a", "missing", "b"});
    REQUIRE(v.type == T::Array);
    REQUIRE(v.elements.size() == 3);
    CHECK(is_bulk(v.elements[0], "1"));
    CHECK(v.elements[1].type == T::NullBulk);
    CHECK(is_bulk(v.elements[2], "2"));
    CHECK(is_error(f.call({"MSET", "a", "1", "b"}), "ERR wrong number of arguments for 'mset' command"));
    CHECK(is_bulk(f.call({"GET", "a"}), "1"));
}

TEST_CASE("MSET clears the expiry of the keys it sets", "[kvd][commands][expiry]")
{
    SessionFixture f;
    f.call({"SET", "a", "old", "EX", "5"});
    f.call({"MSET", "a", "new"});
    CHECK(is_int(f.call({"TTL", "a"}), -1));
}

TEST_CASE("DBSIZE counts keys and FLUSHALL removes them all", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(is_int(f.call({"DBSIZE"}), 0));
    for (int i = 0; i < 300; ++i) f.call({"SET", "key" + std::to_string(i), "v", "EX", "100"});
    CHECK(is_int(f.call({"DBSIZE"}), 300));
    CHECK(f.keyspace.volatile_size() == 300);
    CHECK(is_ok(f.call({"FLUSHALL"})));
    CHECK(is_int(f.call({"DBSIZE"}), 0));
    CHECK(f.keyspace.volatile_size() == 0);
    CHECK(is_ok(f.call({"FLUSHDB", "ASYNC"})));
    CHECK(is_error(f.call({"FLUSHALL", "NOW"}), "ERR syntax error"));
}

TEST_CASE("SELECT accepts database 0 only", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(is_ok(f.call({"SELECT", "0"})));
    CHECK(is_error(f.call({"SELECT", "1"}), "ERR DB index is out of range"));
}

TEST_CASE("INFO returns the host's text as one bulk string", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(is_bulk(f.call({"INFO"}), "# Fixed\r\nsections:0\r\n"));
    CHECK(is_bulk(f.call({"INFO", "transport", "server"}), "# Fixed\r\nsections:2\r\n"));
}

TEST_CASE("CONFIG GET returns matching parameters as pairs; CONFIG SET is refused", "[kvd][commands]")
{
    SessionFixture f;
    Value v = f.call({"CONFIG", "GET", "save"});
    REQUIRE(v.type == T::Array);
    REQUIRE(v.elements.size() == 2);
    CHECK(is_bulk(v.elements[0], "save"));
    CHECK(is_bulk(v.elements[1], ""));
    v = f.call({"CONFIG", "GET", "*O*"});
    REQUIRE(v.type == T::Array);
    CHECK(v.elements.size() == 4); // appendonly, port
    CHECK(f.call({"CONFIG", "SET", "save", ""}).type == T::Error);
    CHECK(f.call({"CONFIG", "GET"}).type == T::Error);
}

TEST_CASE("COMMAND describes every command in the Redis 7 shape", "[kvd][commands]")
{
    SessionFixture f;
    Value all = f.call({"COMMAND"});
    REQUIRE(all.type == T::Array);
    CHECK(is_int(f.call({"COMMAND", "COUNT"}), static_cast<long long>(all.elements.size())));
    bool saw_get = false;
    for (const Value &c : all.elements) {
        REQUIRE(c.type == T::Array);
        REQUIRE(c.elements.size() == 10);
        CHECK(c.elements[0].type == T::Bulk);
        CHECK(c.elements[1].type == T::Integer);
        CHECK(c.elements[2].type == T::Array);
        CHECK(c.elements[3].type == T::Integer);
        if (c.elements[0].text == "get") {
            saw_get = true;
            CHECK(c.elements[1].integer == 2);
            CHECK(c.elements[3].integer == 1);
        }
    }
    CHECK(saw_get);
    Value info = f.call({"COMMAND", "INFO", "set", "nosuch"});
    REQUIRE(info.elements.size() == 2);
    CHECK(info.elements[0].elements[0].text == "set");
    CHECK(info.elements[1].type == T::NullBulk);
}

TEST_CASE("COMMAND DOCS has what redis-cli reads for its help and hints", "[kvd][commands]")
{
    SessionFixture f;
    Value docs = f.call({"COMMAND", "DOCS"});
    REQUIRE(docs.type == T::Array);
    REQUIRE(docs.elements.size() % 2 == 0);
    CHECK(docs.elements.size() / 2 == kvd::command_table().size());
    // redis-cli asserts on these types: a map of strings, flags as status replies.
    std::function<void(const Value &)> check_argument = [&](const Value &arg) {
        REQUIRE(arg.type == T::Array);
        REQUIRE(arg.elements.size() % 2 == 0);
        for (size_t i = 0; i < arg.elements.size(); i += 2) {
            REQUIRE(arg.elements[i].type == T::Bulk);
            const std::string &key = arg.elements[i].text;
            const Value &val = arg.elements[i + 1];
            if (key == "flags") {
                for (const Value &flag : val.elements) CHECK(flag.type == T::Status);
            } else if (key == "arguments") {
                for (const Value &child : val.elements) check_argument(child);
            } else {
                CHECK(val.type == T::Bulk);
            }
        }
    };
    for (size_t i = 0; i < docs.elements.size(); i += 2) {
        CHECK(docs.elements[i].type == T::Bulk);
        const Value &spec = docs.elements[i + 1];
        REQUIRE(spec.type == T::Array);
        for (size_t j = 0; j < spec.elements.size(); j += 2) {
            const std::string &key = spec.elements[j].text;
            if (key == "arguments")
                for (const Value &arg : spec.elements[j + 1].elements) check_argument(arg);
            else CHECK(spec.elements[j + 1].type == T::Bulk);
        }
    }
    Value one = f.call({"COMMAND", "DOCS", "get"});
    REQUIRE(one.elements.size() == 2);
    CHECK(one.elements[0].text == "get");
}

TEST_CASE("COMMAND with an unknown subcommand is an error", "[kvd][commands]")
{
    SessionFixture f;
    CHECK(f.call({"COMMAND", "FROB"}).type == T::Error);
}
