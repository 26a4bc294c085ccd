// SPDX-License-Identifier: MIT
// The versioned handshake seen from outside: a foreign rdma_cm client
// (rdma-handshake-probe) sends hellos twinwire's own client never sends,
// and the server must refuse each with its reason and carry on.
#include "rdma_test.hpp"

#include <catch2/catch.hpp>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;

TEST_CASE("a client whose hello the server cannot accept is refused with the reason, and the listener carries on",
          "[rdma][handshake]")
{
    struct Probe {
        const char *mode;
        const char *reason; // RejectReason on the wire
        const char *text;   // part of the reason the server gives
    };
    const Probe probe = GENERATE(Probe{"garbage", "1", "no twinwire hello"},
                                 Probe{"version", "2", "no common protocol version: client speaks 9..9"},
                                 Probe{"features", "3", "requires unknown features 0x80000000"});
    use_settings({});
    LogWatch logs;
    Env env(2);
    Server &server = env.listen(1, 1); // served by loop 1's own thread while the probe runs
    uint64_t aborted_before = transport_stats(env).handshakes_aborted;

    std::vector<std::string> args{probe.mode, host_text(server.address), std::to_string(port_of(server.address))};
    if (auto source = context().client_source()) args.push_back(host_text(*source));
    std::string output;
    int status = run_program(TW_HANDSHAKE_PROBE, args, &output);
    INFO("probe " << probe.mode << ": " << output);
    CHECK(status == 0);
    CHECK(output.find(std::string("rejected: reason=") + probe.reason + " ") != std::string::npos);
    CHECK(output.find(probe.text) != std::string::npos);
    CHECK(output.find("text=server: ") != std::string::npos);

    // Nothing reached accept, the refusal was counted, nothing was logged
    // above INFO: a bad client is the client's problem, not the server's.
    CHECK(transport_stats(env).handshakes_aborted == aborted_before + 1);
    CHECK(server.accepted == 0);
    CHECK(logs.warnings() == 0);

    // The listener still serves twinwire's own clients.
    Endpoint &good = env.connect(server);
    REQUIRE(env.run_until([&] { return good.connected || good.failed(); }));
    REQUIRE(good.connected);
    good.send("after the refusal");
    REQUIRE(env.run_until([&] { return good.received.size() >= 17 || good.failed(); }));
    CHECK(good.received == "after the refusal");
}
