// SPDX-License-Identifier: MIT
// The request parser on valid, partial, pipelined, malformed and oversized input.
#include "session_fixture.hpp"

#include "resp_parser.hpp"

#include <catch2/catch.hpp>

using kvd::ParseStatus;
using kvd::Request;
using kvd::RequestLimits;

namespace {

std::vector<std::string> words(const Request &r) { return {r.args.begin(), r.args.end()}; }

// The arguments point into the bytes: keep them alive as long as the request.
struct Parsed {
    explicit Parsed(std::string input, RequestLimits limits = {})
        : bytes(std::move(input)), res(kvd::parse_request(bytes, limits, r))
    {
    }
    std::string bytes;
    Request r;
    kvd::ParseResult res;
};

} // namespace

TEST_CASE("a multibulk request parses into its arguments, binary bytes included", "[kvd][parser]")
{
    Parsed p(kvd_test::encode({"SET", "key", std::string("a\0\r\nb", 5)}));
    REQUIRE(p.res.status == ParseStatus::Complete);
    CHECK(p.res.consumed == p.bytes.size());
    CHECK(words(p.r) == std::vector<std::string>{"SET", "key", std::string("a\0\r\nb", 5)});
}

TEST_CASE("an empty bulk string is an argument of length zero", "[kvd][parser]")
{
    Parsed p("*2\r\n$4\r\nECHO\r\n$0\r\n\r\n");
    REQUIRE(p.res.status == ParseStatus::Complete);
    CHECK(words(p.r) == std::vector<std::string>{"ECHO", ""});
}

TEST_CASE("every strict prefix of a request is incomplete and asks for more than it has", "[kvd][parser]")
{
    std::string bytes = kvd_test::encode({"SET", "some-key", "some value"});
    for (size_t n = 0; n < bytes.size(); ++n) {
        Parsed p(bytes.substr(0, n));
        INFO("prefix of " << n << " bytes");
        REQUIRE(p.res.status == ParseStatus::Incomplete);
        CHECK(p.res.needed > n);
        CHECK(p.res.needed <= bytes.size());
    }
}

TEST_CASE("inside a bulk string the parser asks for the whole bulk at once", "[kvd][parser]")
{
    Parsed p("*2\r\n$4\r\nECHO\r\n$1000\r\nabc");
    REQUIRE(p.res.status == ParseStatus::Incomplete);
    CHECK(p.res.needed == 14 + 7 + 1000 + 2);
}

TEST_CASE("an inline prefix without its newline is incomplete", "[kvd][parser]")
{
    Parsed p("SET a b");
    CHECK(p.res.status == ParseStatus::Incomplete);
    CHECK(p.res.needed == 8);
}

TEST_CASE("pipelined requests parse one after the other", "[kvd][parser]")
{
    std::string bytes = kvd_test::encode({"PING"}) + "GET k\r\n" + kvd_test::encode({"ECHO", "x"});
    std::vector<std::vector<std::string>> seen;
    size_t pos = 0;
    while (pos < bytes.size()) {
        Request r;
        auto res = kvd::parse_request(std::string_view(bytes).substr(pos), RequestLimits{}, r);
        REQUIRE(res.status == ParseStatus::Complete);
        seen.push_back(words(r));
        pos += res.consumed;
    }
    CHECK(seen == std::vector<std::vector<std::string>>{{"PING"}, {"GET", "k"}, {"ECHO", "x"}});
}

TEST_CASE("inline commands split on blanks and understand quotes and escapes", "[kvd][parser]")
{
    CHECK(Parsed("set  \"a b\" 'it''s'\r\n").res.status == ParseStatus::Error); // 'it''s' is unbalanced
    Parsed p("set \"a b\" 'it\\'s' \"\\x41\\n\"\r\n");
    REQUIRE(p.res.status == ParseStatus::Complete);
    CHECK(words(p.r) == std::vector<std::string>{"set", "a b", "it's", "A\n"});
    Parsed q("  ping\t\n");
    REQUIRE(q.res.status == ParseStatus::Complete);
    CHECK(words(q.r) == std::vector<std::string>{"ping"});
}

TEST_CASE("a blank inline line and an empty multibulk are requests with no arguments", "[kvd][parser]")
{
    Parsed blank("\r\n");
    CHECK(blank.res.status == ParseStatus::Complete);
    CHECK(blank.res.consumed == 2);
    CHECK(blank.r.args.empty());
    for (const char *empty : {"*0\r\n", "*-1\r\n"}) {
        Parsed p(empty);
        CHECK(p.res.status == ParseStatus::Complete);
        CHECK(p.res.consumed == p.bytes.size());
        CHECK(p.r.args.empty());
    }
}

TEST_CASE("malformed requests are errors that name the problem", "[kvd][parser]")
{
    struct Case {
        const char *bytes;
        const char *error;
    } cases[] = {
        {"*x\r\n", "invalid multibulk length"},
        {"*1\rx", "invalid multibulk length"},
        {"*1\r\n:5\r\n", "expected '$', got ':'"},
        {"*1\r\n$x\r\n", "invalid bulk length"},
        {"*1\r\n$-1\r\n", "invalid bulk length"},
        {"*1\r\n$3\r\nabcde", "expected CRLF after bulk string"},
        {"*123456789012345678901234567890123456\r\n", "too big mbulk count string"},
        {"*1\r\n$123456789012345678901234567890123456\r\n", "too big bulk count string"},
        {"get \"unterminated\r\n", "unbalanced quotes in request"},
        {"get \"a\"b\r\n", "unbalanced quotes in request"},
    };
    for (const Case &c : cases) {
        Parsed p(c.bytes);
        INFO(c.bytes);
        REQUIRE(p.res.status == ParseStatus::Error);
        CHECK(p.res.error == std::string("Protocol error: ") + c.error);
    }
}

TEST_CASE("a bulk longer than max_request_size is refused before it arrives", "[kvd][parser]")
{
    RequestLimits limits;
    limits.max_request = 1024;
    Parsed p("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000\r\n", limits);
    REQUIRE(p.res.status == ParseStatus::Error);
    CHECK(p.res.error.find("larger than max_request_size (1024 bytes)") != std::string::npos);
}

TEST_CASE("many small arguments adding up past max_request_size are refused", "[kvd][parser]")
{
    RequestLimits limits;
    limits.max_request = 1024;
    Parsed p("*1000\r\n$1\r\na\r\n", limits);
    REQUIRE(p.res.status == ParseStatus::Error);
    CHECK(p.res.error.find("larger than max_request_size") != std::string::npos);
}

TEST_CASE("a multibulk count beyond max_args is refused", "[kvd][parser]")
{
    RequestLimits limits;
    limits.max_args = 10;
    Parsed p("*11\r\n", limits);
    REQUIRE(p.res.status == ParseStatus::Error);
    CHECK(p.res.error == "Protocol error: invalid multibulk length: 11 arguments, more than the limit of 10");
}

TEST_CASE("an inline line longer than max_inline without a newline is an error, not a wait", "[kvd][parser]")
{
    RequestLimits limits;
    limits.max_inline = 100;
    CHECK(Parsed(std::string(100, 'a'), limits).res.status == ParseStatus::Incomplete);
    Parsed p(std::string(101, 'a'), limits);
    REQUIRE(p.res.status == ParseStatus::Error);
    CHECK(p.res.error == "Protocol error: too big inline request");
    CHECK(Parsed(std::string(101, 'a') + "\n", limits).res.status == ParseStatus::Error);
}

namespace {

/// "*N\r\n" followed by N arguments "$1\r\nk\r\n".
std::string many_small_arguments(size_t n)
{
    std::string bytes = "*" + std::to_string(n) + "\r\n";
    bytes.reserve(bytes.size() + 7 * n);
    for (size_t i = 0; i < n; ++i) bytes += "$1\r\nk\r\n";
    return bytes;
}

/// Feed `bytes` to one parser as a stream arriving `piece` bytes at a time
/// (each call sees everything that arrived so far, as the session does).
kvd::ParseResult parse_in_pieces(kvd::RequestParser &parser, const std::string &bytes, size_t piece, Request &r,
                                 size_t &calls)
{
    kvd::ParseResult res{ParseStatus::Incomplete, 0, 0, {}};
    for (size_t have = std::min(piece, bytes.size());; have = std::min(have + piece, bytes.size())) {
        res = parser.parse(std::string_view(bytes).substr(0, have), r);
        ++calls;
        if (res.status != ParseStatus::Incomplete || have == bytes.size()) return res;
    }
}

} // namespace

TEST_CASE("a request of a million arguments arriving in 1000-byte pieces is examined about once per byte",
          "[kvd][parser]")
{
    const std::string bytes = many_small_arguments(1u << 20); // 7 MiB
    RequestLimits limits;
    limits.max_request = 64u << 20;
    kvd::RequestParser parser(limits);
    Request r;
    size_t calls = 0;
    auto res = parse_in_pieces(parser, bytes, 1000, r, calls);
    REQUIRE(res.status == ParseStatus::Complete);
    CHECK(res.consumed == bytes.size());
    CHECK(r.args.size() == (1u << 20));
    CHECK(calls == (bytes.size() + 999) / 1000);
    // Restarting from byte 0 on every piece would examine ~3600 times as much.
    INFO("bytes examined: " << parser.bytes_examined() << " for " << bytes.size() << " bytes");
    CHECK(parser.bytes_examined() <= bytes.size());
}

TEST_CASE("parse work stays linear whether a request arrives whole, byte by byte or in odd pieces", "[kvd][parser]")
{
    const std::string value(3000, 'v');
    const std::string bytes = kvd_test::encode({"MSET", "a", value, "b", value}) + std::string(1, 'x');
    const std::string request = bytes.substr(0, bytes.size() - 1);
    for (size_t piece : {size_t(1), size_t(7), size_t(1000), request.size()}) {
        kvd::RequestParser parser(RequestLimits{});
        Request r;
        size_t calls = 0;
        INFO("pieces of " << piece << " bytes");
        REQUIRE(parse_in_pieces(parser, request, piece, r, calls).status == ParseStatus::Complete);
        // Headers are read about once each (a line end seen before its LF
        // arrived is looked at again); bulk bodies are skipped, not scanned.
        const size_t headers = request.size() - 2 * value.size();
        CHECK(parser.bytes_examined() <= 2 * headers);
        CHECK(words(r) == std::vector<std::string>{"MSET", "a", value, "b", value});
    }
    // An inline line is searched for its newline once, then split once.
    const std::string line = "SET key " + std::string(20000, 'v') + "\r\n";
    kvd::RequestParser parser(RequestLimits{});
    Request r;
    size_t calls = 0;
    REQUIRE(parse_in_pieces(parser, line, 1, r, calls).status == ParseStatus::Complete);
    CHECK(parser.bytes_examined() <= 2 * line.size());
}

TEST_CASE("a huge multibulk count reserves nothing before its arguments arrive", "[kvd][parser]")
{
    kvd::RequestParser parser(RequestLimits{});
    Request r;
    auto res = parser.parse("*1048576\r\n", r);
    CHECK(res.status == ParseStatus::Incomplete);
    CHECK(parser.slots_reserved() == 0);
    CHECK(r.args.capacity() == 0);
    res = parser.parse("*1048576\r\n$1\r\nk\r\n$1\r\nk\r\n", r);
    CHECK(res.status == ParseStatus::Incomplete);
    CHECK(parser.slots_reserved() <= 16); // what arrived, with the vector's own growth
}

TEST_CASE("the parser resumes a request whose bytes moved between calls", "[kvd][parser]")
{
    const std::string bytes = kvd_test::encode({"SET", "key", "value"});
    kvd::RequestParser parser(RequestLimits{});
    Request r;
    std::string first = bytes.substr(0, 12);
    REQUIRE(parser.parse(first, r).status == ParseStatus::Incomplete);
    first.assign(64, '?'); // the old bytes are gone: only offsets are kept
    std::string moved = bytes;
    auto res = parser.parse(moved, r);
    REQUIRE(res.status == ParseStatus::Complete);
    CHECK(words(r) == std::vector<std::string>{"SET", "key", "value"});
    // And the next request starts afresh.
    CHECK(parser.parse("PING\r\n", r).status == ParseStatus::Complete);
    CHECK(words(r) == std::vector<std::string>{"PING"});
}
