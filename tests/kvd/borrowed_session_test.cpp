// SPDX-License-Identifier: MIT
// Session::feed_borrowed: requests parsed where the transport lent them,
// the rest of a split request finished from the input buffer, and large
// GET replies through a ReplyLender - the same replies as the copying path.
#include "session_fixture.hpp"

#include <catch2/catch.hpp>

using namespace kvd;
using namespace kvd_test;

namespace {

const std::string kPipeline = encode({"SET", "k", std::string(300, 'v')}) + "PING\r\n" + encode({"GET", "k"}) +
                              encode({"INCR", "n"}) + "\r\n" + encode({"GET", "missing"});

/// What the connection does: the first `split` bytes lent in place, the
/// handler's leftover and every later byte through the input buffer.
std::string serve_split(SessionFixture &f, const std::string &bytes, size_t split, size_t *used_out)
{
    std::string out;
    size_t used = 0;
    Session::Outcome o = f.session.feed_borrowed(std::string_view(bytes).substr(0, split), out, 1u << 20, used);
    REQUIRE(o == Session::Outcome::Idle);
    REQUIRE(used <= split);
    *used_out = used;
    f.input.append(bytes.substr(used));
    return out + f.drain_replies();
}

/// Records what it was asked to send, as a transport's lent buffers would.
struct RecordingLender : ReplyLender {
    bool send_in_place(std::string &pending, std::initializer_list<std::string_view> pieces) override
    {
        sent += pending;
        pending.clear();
        for (std::string_view p : pieces) sent.append(p.data(), p.size());
        ++calls;
        return true;
    }
    std::string sent;
    int calls = 0;
};

} // namespace

TEST_CASE("requests lent whole are parsed in place, with nothing copied into the input", "[kvd][session]")
{
    SessionFixture reference;
    const std::string want = reference.feed(kPipeline);
    SessionFixture f;
    std::string out;
    size_t used = 0;
    CHECK(f.session.feed_borrowed(kPipeline, out, 1u << 20, used) == Session::Outcome::Idle);
    CHECK(used == kPipeline.size());
    CHECK(out == want);
    CHECK(f.session.bytes_joined() == 0);
}

TEST_CASE("a request split between lent bytes and the input buffer at every byte boundary still parses",
          "[kvd][session]")
{
    SessionFixture reference;
    const std::string want = reference.feed(kPipeline);
    for (size_t split = 0; split <= kPipeline.size(); ++split) {
        CAPTURE(split);
        SessionFixture f;
        size_t used = 0;
        CHECK(serve_split(f, kPipeline, split, &used) == want);
        CHECK(f.input.empty());
        CHECK(f.session.commands_processed() == 5);
    }
}

TEST_CASE("bad input lent in place gets the same clear error and closes", "[kvd][session]")
{
    SessionFixture f;
    std::string out;
    size_t used = 0;
    const std::string bytes = encode({"PING"}) + "*1\r\n$x\r\n";
    CHECK(f.session.feed_borrowed(bytes, out, 1u << 20, used) == Session::Outcome::Close);
    CHECK(out == "+PONG\r\n-ERR Protocol error: invalid bulk length\r\n");
    CHECK(f.session.protocol_error());
}

TEST_CASE("a large GET reply goes through the lender after the replies before it; small ones stay buffered",
          "[kvd][session]")
{
    const std::string big(Reply::kLendFrom + 5, 'x');
    SessionFixture f;
    f.feed(encode({"SET", "big", big}) + encode({"SET", "small", "s"}));
    RecordingLender lender;
    f.session.lender = &lender;
    std::string out = f.feed(encode({"GET", "small"}) + encode({"GET", "big"}) + encode({"PING"}));
    CHECK(lender.calls == 1);
    CHECK(lender.sent == "$1\r\ns\r\n$" + std::to_string(big.size()) + "\r\n" + big + "\r\n");
    CHECK(out == "+PONG\r\n");
}

TEST_CASE("inside MULTI a large GET is not lent: EXEC may still replace its replies", "[kvd][session]")
{
    const std::string big(Reply::kLendFrom + 5, 'x');
    SessionFixture f;
    f.feed(encode({"SET", "big", big}));
    RecordingLender lender;
    f.session.lender = &lender;
    std::string out = f.feed(encode({"MULTI"}) + encode({"GET", "big"}) + encode({"EXEC"}));
    CHECK(lender.calls == 0);
    CHECK(out == "+OK\r\n+QUEUED\r\n*1\r\n$" + std::to_string(big.size()) + "\r\n" + big + "\r\n");
}
