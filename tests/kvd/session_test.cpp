// SPDX-License-Identifier: MIT
// A session over a byte stream: pipelining, requests split across reads and
// buffer chunks, backlog, and closing on QUIT or bad input.
#include "session_fixture.hpp"

#include <catch2/catch.hpp>

using kvd::Session;
using kvd_test::encode;
using kvd_test::SessionFixture;
using kvd_test::Value;

namespace {

/// Append `bytes` as its own buffer chunk (evbuffer keeps moved chunks apart).
void append_chunk(twinwire::Buffer &input, const std::string &bytes)
{
    twinwire::Buffer piece;
    piece.append(bytes);
    input.append(piece);
}

} // namespace

TEST_CASE("pipelined requests get their replies in order in one batch", "[kvd][session]")
{
    SessionFixture f;
    std::string out = f.feed(encode({"SET", "a", "1"}) + encode({"INCR", "a"}) + "GET a\r\n" + encode({"PING"}));
    CHECK(out == "+OK\r\n:2\r\n$1\r\n2\r\n+PONG\r\n");
    CHECK(f.outcome == Session::Outcome::Idle);
    CHECK(f.input.empty());
    CHECK(f.session.commands_processed() == 4);
}

TEST_CASE("a request arriving byte by byte is answered once, when complete", "[kvd][session]")
{
    SessionFixture f;
    std::string bytes = encode({"SET", "key", "value"}) + encode({"GET", "key"});
    std::string out;
    for (char c : bytes) out += f.feed(std::string(1, c));
    CHECK(out == "+OK\r\n$5\r\nvalue\r\n");
    CHECK(f.input.empty());
}

TEST_CASE("requests split across buffer chunks are joined and parsed", "[kvd][session]")
{
    SessionFixture f;
    std::string value(70000, 'v'); // larger than the pull-up slack
    std::string bytes = encode({"SET", "big", value}) + "GET big\r\n" + encode({"ECHO", "tail"});
    for (size_t at = 0; at < bytes.size(); at += 4093) append_chunk(f.input, bytes.substr(at, 4093));
    std::string out = f.drain_replies();
    CHECK(out == "+OK\r\n$70000\r\n" + value + "\r\n$4\r\ntail\r\n");
    CHECK(f.input.empty());
}

TEST_CASE("a large value arriving in pieces waits in the input, then is stored whole", "[kvd][session]")
{
    SessionFixture f;
    std::string value(100000, 'x');
    std::string bytes = encode({"SET", "k", value});
    CHECK(f.feed(bytes.substr(0, 100)).empty());
    CHECK(f.feed(bytes.substr(100, 50000)).empty());
    CHECK(f.input.size() == 50100); // nothing consumed before it is complete
    CHECK(f.feed(bytes.substr(50100)) == "+OK\r\n");
    CHECK(f.input.empty());
    CHECK(f.call({"GET", "k"}).text == value);
}

TEST_CASE("replies past the backlog limit stop the batch until they are sent", "[kvd][session]")
{
    SessionFixture f;
    f.call({"SET", "k", std::string(1000, 'x')});
    std::string pipeline;
    for (int i = 0; i < 10; ++i) pipeline += encode({"GET", "k"});
    f.input.append(pipeline);
    std::string out;
    auto outcome = f.session.feed(f.input, out, 2500);
    CHECK(outcome == Session::Outcome::Backlogged);
    CHECK(out.size() > 2500);
    CHECK(out.size() < 4 * 1010); // stopped soon after the limit
    CHECK(!f.input.empty());      // the rest waits, nothing lost
    std::string rest = f.drain_replies(2500);
    std::vector<Value> replies;
    REQUIRE(kvd_test::parse_all(out + rest, replies));
    CHECK(replies.size() == 10);
}

TEST_CASE("QUIT replies OK, stops at once and leaves later requests unrun", "[kvd][session]")
{
    SessionFixture f;
    std::string out = f.feed(encode({"QUIT"}) + encode({"SET", "after", "quit"}));
    CHECK(out == "+OK\r\n");
    CHECK(f.outcome == Session::Outcome::Close);
    CHECK_FALSE(f.session.protocol_error());
    CHECK_FALSE(f.keyspace.exists("after"));
}

TEST_CASE("a protocol error replies an error after the replies before it, then closes", "[kvd][session]")
{
    SessionFixture f;
    std::string out = f.feed(encode({"PING"}) + "*1\r\n$x\r\n" + encode({"PING"}));
    CHECK(out == "+PONG\r\n-ERR Protocol error: invalid bulk length\r\n");
    CHECK(f.outcome == Session::Outcome::Close);
    CHECK(f.session.protocol_error());
    CHECK(f.session.close_reason() == "Protocol error: invalid bulk length");
    CHECK(f.counters.protocol_errors == 1);
}

TEST_CASE("an oversized request is cut off with the reason as soon as its header says so", "[kvd][session]")
{
    kvd::RequestLimits limits;
    limits.max_request = 4096;
    SessionFixture f(limits);
    std::string out = f.feed("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000000\r\n");
    CHECK(f.outcome == Session::Outcome::Close);
    CHECK(out.rfind("-ERR Protocol error: request of at least", 0) == 0);
    CHECK(f.session.close_reason().find("max_request_size (4096 bytes)") != std::string::npos);
}

TEST_CASE("an endless inline line is cut off at the inline limit", "[kvd][session]")
{
    SessionFixture f;
    std::string out;
    for (int i = 0; i < 100 && f.outcome != Session::Outcome::Close; ++i) out += f.feed(std::string(4096, 'a'));
    CHECK(f.outcome == Session::Outcome::Close);
    CHECK(out == "-ERR Protocol error: too big inline request\r\n");
}

TEST_CASE("blank lines between inline commands are ignored", "[kvd][session]")
{
    SessionFixture f;
    CHECK(f.feed("\r\n\r\nPING\r\n\n") == "+PONG\r\n");
    CHECK(f.session.commands_processed() == 1);
}
