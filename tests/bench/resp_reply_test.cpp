// SPDX-License-Identifier: MIT
#include "resp_load.hpp"
#include "resp_reply.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

using namespace twinwire::bench;
using resp::Reply;
using resp::Type;

namespace {

Reply complete(std::string_view data, Type type)
{
    Reply r = resp::parse_reply(data);
    INFO("reply '" << std::string(data) << "': " << r.problem);
    REQUIRE(r.outcome == Reply::Outcome::Complete);
    CHECK(r.type == type);
    return r;
}

std::string malformed(std::string_view data)
{
    Reply r = resp::parse_reply(data);
    INFO("reply '" << std::string(data) << "'");
    REQUIRE(r.outcome == Reply::Outcome::Malformed);
    return r.problem;
}

} // namespace

TEST_CASE("well-formed RESP2 replies parse with their exact length", "[resp]")
{
    CHECK(complete("+OK\r\n", Type::Status).text == "OK");
    CHECK(complete("+OK\r\n", Type::Status).length == 5);
    CHECK(complete("-ERR wrong\r\n", Type::Error).text == "ERR wrong");
    CHECK(complete(":-42\r\n", Type::Integer).length == 6);
    CHECK(complete(":0\r\n", Type::Integer).length == 4);
    CHECK(complete("$3\r\nxyz\r\n", Type::Bulk).length == 9);
    CHECK(complete("$0\r\n\r\n", Type::Bulk).length == 6);
    CHECK(complete("$-1\r\n", Type::NullBulk).length == 5);
    CHECK(complete("*-1\r\n", Type::NullArray).length == 5);
    CHECK(complete("*0\r\n", Type::Array).length == 4);
    CHECK(complete("*2\r\n$1\r\na\r\n*1\r\n:1\r\n", Type::Array).length == 19);
    // A bulk may hold CR and LF; only its length counts.
    CHECK(complete("$4\r\n\r\n\r\n\r\n", Type::Bulk).length == 10);
    // Bytes after the reply belong to the next one.
    CHECK(complete("+OK\r\n+OK\r\n", Type::Status).length == 5);
}

TEST_CASE("a reply cut short is incomplete, and a bulk says how much it needs", "[resp]")
{
    for (const char *part : {"", "+", "+OK", "+OK\r", "$3", "$3\r\n", "*2\r\n:1\r\n", ":12"}) {
        INFO("'" << part << "'");
        CHECK(resp::parse_reply(part).outcome == Reply::Outcome::Incomplete);
    }
    Reply r = resp::parse_reply("$10\r\nabc");
    CHECK(r.outcome == Reply::Outcome::Incomplete);
    CHECK(r.need == 17);
}

TEST_CASE("replies a correct server never sends are malformed, with the reason", "[resp]")
{
    CHECK_THAT(malformed("+OK\n"), Catch::Contains("line feed without carriage return"));
    CHECK_THAT(malformed("+OK\rX"), Catch::Contains("carriage return without line feed"));
    CHECK_THAT(malformed("OK\r\n"), Catch::Contains("unknown reply type 'O'"));
    CHECK_THAT(malformed(std::string("\x01", 1)), Catch::Contains("unknown reply type '0x01'"));
    CHECK_THAT(malformed("$3\r\nabcd\r\n"), Catch::Contains("bulk string not followed by CRLF"));
    CHECK_THAT(malformed("$-2\r\n"), Catch::Contains("bad number"));
    CHECK_THAT(malformed("$+3\r\nabc\r\n"), Catch::Contains("bad number"));
    CHECK_THAT(malformed("$ 3\r\nabc\r\n"), Catch::Contains("bad number"));
    CHECK_THAT(malformed("$03\r\nabc\r\n"), Catch::Contains("leading zero"));
    CHECK_THAT(malformed("$\r\n"), Catch::Contains("empty number"));
    CHECK_THAT(malformed(":99999999999999999999\r\n"), Catch::Contains("out of range"));
    CHECK_THAT(malformed("$999999999999\r\n"), Catch::Contains("longer than 512 MiB"));
    CHECK_THAT(malformed("*1\r\n!\r\n"), Catch::Contains("unknown reply type '!' at byte 4"));
    CHECK_THAT(malformed("+" + std::string(70000, 'a')), Catch::Contains("longer than 64 KiB"));
    std::string deep;
    for (int i = 0; i < 20; ++i) deep += "*1\r\n";
    CHECK_THAT(malformed(deep + ":1\r\n"), Catch::Contains("nested deeper"));
}

TEST_CASE("a reply's content is kept when asked for, nested arrays and int64's extremes included", "[resp]")
{
    resp::Value v;
    Reply r = resp::parse_reply("*4\r\n+OK\r\n:-9223372036854775808\r\n*2\r\n$2\r\nab\r\n$-1\r\n*-1\r\nrest", v);
    REQUIRE(r.outcome == Reply::Outcome::Complete);
    CHECK(r.length == 54);
    REQUIRE(v.type == Type::Array);
    REQUIRE(v.elements.size() == 4);
    CHECK((v.elements[0].type == Type::Status && v.elements[0].text == "OK"));
    CHECK((v.elements[1].type == Type::Integer && v.elements[1].integer == INT64_MIN));
    REQUIRE(v.elements[2].elements.size() == 2);
    CHECK((v.elements[2].elements[0].type == Type::Bulk && v.elements[2].elements[0].text == "ab"));
    CHECK(v.elements[2].elements[1].type == Type::NullBulk);
    CHECK(v.elements[3].type == Type::NullArray);
    CHECK(complete(":9223372036854775807\r\n", Type::Integer).length == 22);
    CHECK_THAT(malformed(":9223372036854775808\r\n"), Catch::Contains("out of range"));
    CHECK_THAT(malformed(":-9223372036854775809\r\n"), Catch::Contains("out of range"));

    std::vector<resp::Value> all;
    CHECK(resp::parse_all("+a\r\n$1\r\nb\r\n", all));
    REQUIRE(all.size() == 2);
    CHECK(all[1].text == "b");
    CHECK_FALSE(resp::parse_all("+a\r\n$1\r\nb", all));
}

TEST_CASE("requests are RESP2 arrays of bulk strings with redis-benchmark's key names", "[resp]")
{
    CHECK(resp_command({"SET", "key:000000000007", "xyz"}) ==
          "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000007\r\n$3\r\nxyz\r\n");
    CHECK(resp_command({"GET", "k"}) == "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    CHECK(resp_command({"SET", "k", ""}) == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
    CHECK(resp_key(1234) == "key:000000001234");
}

TEST_CASE("the request pool hands out exactly the requested total", "[resp]")
{
    RequestPool pool(10);
    CHECK(pool.take(4) == 4);
    CHECK(pool.take(4) == 4);
    CHECK(pool.take(4) == 2);
    CHECK(pool.take(4) == 0);
}
