// SPDX-License-Identifier: MIT
// Conformance: the zero-copy buffer API (send_buf_get/submit,
// recv_buf_borrow/return) and its place in the byte stream.
#include "harness.hpp"
#include "needs.hpp"
#include "payload.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>

using namespace twinwire::conformance;

namespace {

int give_back(Endpoint &e, tw_buf *buf, size_t consumed)
{
    OpGuard guard;
    return e.ops().recv_buf_return(e.conn(), buf, consumed);
}

void write_all(Env &env, Endpoint &e, const std::string &data)
{
    e.send(data);
    REQUIRE(env.run_until([&] { return e.queued() == 0 || e.failed(); }));
}

} // namespace

TEST_CASE("zero-copy buffers round-trip in stream order, and a partial return keeps the rest readable", "[zero-copy]")
{
    // Accepts: a second send_buf_get while one is out: any negative code;
    // min_len larger than any buffer: -EMSGSIZE; read while a buffer is
    // borrowed: -EBUSY.
    CONFORMANCE_NEEDS(TW_NEED_OP(send_buf_get), TW_NEED_OP(send_buf_submit), TW_NEED_OP(recv_buf_borrow),
                      TW_NEED_OP(recv_buf_return));
    Env env;
    const tw_transport_ops &ops = env.ops();
    Server &server = env.listen();
    server.echo = false;
    uint64_t reads_reported = 0;
    server.configure = [&](Endpoint &e) {
        e.auto_read = false; // this case reads by hand
        e.manage_interest = false;
        e.on_event = [&](Endpoint &, uint32_t events) {
            if (events & TW_EV_READ) reads_reported++;
            return true;
        };
    };
    Endpoint &client = env.connect_both(server);
    Endpoint &peer = *server.endpoints[0];

    // Sender: write, then a lent buffer, then write again - one stream.
    std::string middle = make_payload(3000, 11);
    write_all(env, client, "AAA");
    tw_buf out = TW_BUF_INIT;
    {
        OpGuard guard;
        REQUIRE(ops.send_buf_get(client.conn(), middle.size(), &out) == 0);
        REQUIRE(out.data != nullptr);
        REQUIRE(out.cap >= middle.size());
        tw_buf second = TW_BUF_INIT;
        CHECK(ops.send_buf_get(client.conn(), 1, &second) < 0); // one buffer out at a time
        memcpy(out.data, middle.data(), middle.size());
        out.len = middle.size();
        REQUIRE(ops.send_buf_submit(client.conn(), &out) == 0);
    }
    write_all(env, client, "CCC");
    {
        OpGuard guard;
        tw_buf empty = TW_BUF_INIT;
        REQUIRE(ops.send_buf_get(client.conn(), 0, &empty) == 0); // len 0 just hands it back
        empty.len = 0;
        CHECK(ops.send_buf_submit(client.conn(), &empty) == 0);
        tw_buf huge = TW_BUF_INIT;
        CHECK(ops.send_buf_get(client.conn(), SIZE_MAX / 2, &huge) == -EMSGSIZE);
    }
    const std::string expected = "AAA" + middle + "CCC";

    // Receiver: borrow, consume half, and the other half is still there.
    std::string assembled;
    tw_buf in = TW_BUF_INIT;
    REQUIRE(borrow(env, peer, &in) == 0);
    REQUIRE(in.len > 0);
    REQUIRE(std::string(static_cast<char *>(in.data), in.len) == expected.substr(0, in.len));
    char byte;
    CHECK(peer.read(&byte, 1) == -EBUSY); // no read while a buffer is out
    size_t half = in.len / 2;
    assembled.append(static_cast<char *>(in.data), half);
    uint64_t reads_before = reads_reported;
    REQUIRE(give_back(peer, &in, half) == 0);
    // Level-triggered: what was not consumed is announced again.
    REQUIRE(env.run_until([&] { return reads_reported > reads_before; }));
    REQUIRE(peer.read(&byte, 1) == 1); // plain read continues where the borrow stopped
    assembled += byte;
    while (assembled.size() < expected.size()) {
        REQUIRE(borrow(env, peer, &in) == 0);
        REQUIRE(in.len > 0);
        assembled.append(static_cast<char *>(in.data), in.len);
        REQUIRE(give_back(peer, &in, in.len) == 0);
    }
    CHECK(assembled.size() == expected.size());
    CHECK(checksum(assembled) == checksum(expected));
    if (TW_NEED_OP(get_stats).met) {
        CHECK(client.stats().zero_copy_sends >= 1);
        CHECK(peer.stats().zero_copy_recvs >= 2);
    }

    // End-of-stream through the borrow API: 0 with an empty buffer.
    if (env.caps() & TW_CAP_HALF_CLOSE) {
        client.shutdown_after_flush();
        REQUIRE(borrow(env, peer, &in) == 0);
        CHECK(in.len == 0);
    }
    CHECK(env.rule_violations() == "");
}

// Accepts: -EINVAL for a buffer not lent and for consuming more than was lent.
TEST_CASE("returning a buffer that was not lent is refused and changes nothing", "[zero-copy][errors]")
{
    CONFORMANCE_NEEDS(TW_NEED_OP(recv_buf_borrow), TW_NEED_OP(recv_buf_return));
    Env env;
    Server &server = env.listen();
    server.echo = false;
    server.configure = [](Endpoint &e) {
        e.auto_read = false;
        e.manage_interest = false;
        e.on_event = [](Endpoint &self, uint32_t events) {
            if (events & TW_EV_CONNECTED) self.set_events(0);
            return true;
        };
    };
    Endpoint &client = env.connect(server);
    write_all(env, client, "kept");
    REQUIRE(env.run_until([&] { return !server.endpoints.empty() && server.endpoints[0]->connected; }));
    Endpoint &peer = *server.endpoints[0];
    tw_buf bogus = TW_BUF_INIT;
    char stack[4];
    bogus.data = stack;
    bogus.len = bogus.cap = sizeof stack;
    CHECK(give_back(peer, &bogus, 1) == -EINVAL);
    tw_buf in = TW_BUF_INIT;
    REQUIRE(borrow(env, peer, &in) == 0);
    CHECK(give_back(peer, &in, in.len + 1) == -EINVAL); // more than was lent
    std::string got(static_cast<char *>(in.data), in.len);
    REQUIRE(give_back(peer, &in, 0) == 0);
    CHECK(got == std::string("kept").substr(0, got.size()));
}
