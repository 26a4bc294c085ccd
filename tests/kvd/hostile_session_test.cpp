// SPDX-License-Identifier: MIT
// A session against hostile requests: replies limited while they are built,
// allocation failures contained to the client, and requests arriving in
// many pieces parsed with linear work.
#include "session_fixture.hpp"

#include <catch2/catch.hpp>

#include <new>

using kvd::Session;
using kvd_test::encode;
using kvd_test::SessionFixture;
using kvd_test::Value;

namespace {

std::vector<Value> parse_replies(const std::string &raw)
{
    std::vector<Value> replies;
    REQUIRE(kvd_test::parse_all(raw, replies));
    return replies;
}

/// A host whose INFO cannot allocate: stands in for memory running out in
/// the middle of a command (the daemon's script test exhausts it for real).
class OutOfMemoryHost : public kvd_test::FixedHost {
public:
    std::string info(const std::vector<std::string_view> &, const kvd::Session &) override { throw std::bad_alloc(); }
};

} // namespace

TEST_CASE("an MGET whose reply would pass the reply limit gets an error, built no further than the limit",
          "[kvd][session][limits]")
{
    kvd::RequestLimits limits;
    limits.max_reply = 1u << 20;
    SessionFixture f(limits);
    const std::string value(64u << 10, 'v');
    REQUIRE(f.call({"SET", "big", value}).text == "OK");
    std::vector<std::string> mget{"MGET"};
    for (int i = 0; i < 3000; ++i) mget.push_back("big"); // 192 MiB of replies without a limit
    f.input.append(encode(mget) + encode({"PING"}));
    std::string out;
    size_t peak_capacity = 0;
    for (;;) {
        f.outcome = f.session.feed(f.input, out, 1u << 20);
        peak_capacity = std::max(peak_capacity, out.capacity());
        if (f.outcome != Session::Outcome::Backlogged) break;
    }
    auto replies = parse_replies(out);
    REQUIRE(replies.size() == 2);
    CHECK(replies[0].type == Value::Type::Error);
    CHECK(replies[0].text == "ERR reply to 'mget' exceeds the reply limit of 1048576 bytes (write_buffer_limit); "
                             "nothing was sent");
    CHECK(replies[1].text == "PONG"); // the client is still served
    CHECK(f.outcome == Session::Outcome::Idle);
    CHECK(peak_capacity <= 4u << 20); // the string never held much more than the limit
    CHECK(f.counters.replies_too_large == 1);
}

TEST_CASE("a reply just under the reply limit is sent whole", "[kvd][session][limits]")
{
    kvd::RequestLimits limits;
    limits.max_reply = 1u << 20;
    SessionFixture f(limits);
    const std::string value(100000, 'v');
    f.call({"SET", "k", value});
    Value v = f.call({"MGET", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k"}); // ~1,000,100 bytes
    REQUIRE(v.type == Value::Type::Array);
    CHECK(v.elements.size() == 10);
    CHECK(v.elements[9].text == value);
}

TEST_CASE("many large GETs in one pipeline are answered in batches, none refused", "[kvd][session][limits]")
{
    kvd::RequestLimits limits;
    limits.max_reply = 1u << 20;
    SessionFixture f(limits);
    f.call({"SET", "k", std::string(512u << 10, 'v')});
    std::string pipeline;
    for (int i = 0; i < 20; ++i) pipeline += encode({"GET", "k"});
    f.input.append(pipeline);
    std::string out;
    int batches = 0;
    size_t replies = 0;
    for (;;) {
        out.clear();
        f.outcome = f.session.feed(f.input, out, 1u << 20);
        ++batches;
        replies += parse_replies(out).size();
        CHECK(out.size() <= (1u << 20) + (512u << 10) + 64); // the backlog limit plus one reply
        if (f.outcome != Session::Outcome::Backlogged) break;
    }
    CHECK(replies == 20);
    CHECK(batches >= 10);
    CHECK(f.counters.replies_too_large == 0);
}

TEST_CASE("an allocation failure in a command closes that session with a reason, keeping earlier replies",
          "[kvd][session][limits]")
{
    kvd_test::ManualClock clock;
    kvd::Keyspace keyspace(clock);
    OutOfMemoryHost host;
    kvd::SessionCounters counters;
    Session session(keyspace, host, kvd::RequestLimits{}, counters);
    twinwire::Buffer input;
    input.append(encode({"SET", "a", "1"}) + encode({"INFO"}) + encode({"SET", "b", "2"}));
    std::string out;
    Session::Outcome outcome = Session::Outcome::Idle;
    REQUIRE_NOTHROW(outcome = session.feed(input, out, 1u << 20));
    CHECK(outcome == Session::Outcome::Close);
    CHECK(session.out_of_memory());
    CHECK(session.close_reason() == "out of memory while serving its request");
    CHECK(out == "+OK\r\n-ERR out of memory serving this request; closing the connection\r\n");
    CHECK_FALSE(keyspace.exists("b")); // nothing after the failure ran
    CHECK(counters.out_of_memory == 1);
}

TEST_CASE("a million-argument request in 1000-byte reads costs work linear in its size", "[kvd][session][limits]")
{
    SessionFixture f;
    std::vector<std::string> words{"EXISTS"};
    for (int i = 0; i < (1 << 20) - 1; ++i) words.push_back("k");
    const std::string bytes = encode(words); // ~6.3 MiB
    std::string out;
    for (size_t at = 0; at < bytes.size(); at += 1000) {
        twinwire::Buffer piece; // each read its own chunk, as from the network
        piece.append(bytes.substr(at, 1000));
        f.input.append(piece);
        out += f.drain_replies();
    }
    CHECK(out == ":0\r\n");
    INFO("examined " << f.session.parse_bytes_examined() << ", copied " << f.session.bytes_joined() << " for "
                     << bytes.size() << " bytes");
    CHECK(f.session.parse_bytes_examined() <= bytes.size());
    CHECK(f.session.bytes_joined() <= 4 * bytes.size());
}
