// SPDX-License-Identifier: MIT
// The bench's client and server halves end to end over the built-in TCP
// backend on loopback, in one process, and against misbehaving servers.
#include "bench_server.hpp"
#include "latency_test.hpp"
#include "resp_load.hpp"
#include "step_runner.hpp"
#include "sweep.hpp"
#include "throughput_test.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

using namespace twinwire;
using namespace twinwire::bench;

namespace {

Config tcp_config(unsigned threads)
{
    Config c;
    c.set("transport", "tcp");
    c.set("threads", std::to_string(threads));
    c.set("log_level", "error");
    return c;
}

ListenOptions loopback_any_port()
{
    ListenOptions at;
    at.address = "127.0.0.1";
    at.port = 0;
    return at;
}

// A server whose connections answer every arrival with `reply(bytes)`.
std::shared_ptr<Listener> fake_server(Runtime &rt, std::function<std::string(const std::string &)> reply)
{
    return rt.listen(loopback_any_port(), [reply](const ConnectionPtr &c) {
        c->on_data([reply](Connection &conn, Buffer &in) { conn.write(reply(in.take(in.size()))); });
    });
}

// Runs one step of `workers` connections against `port`.
void run_one(Runtime &rt, uint16_t port, unsigned connections, Phase::MakeWorker make, unsigned stall_s = 30)
{
    Step step{"test", Progress::Unit::Requests, std::move(make), [](const Phase &) {}};
    run_steps(rt, StepSettings{{"127.0.0.1", port, ""}, connections, stall_s}, {step});
}

RespOptions resp_options(RespTest test, uint64_t requests)
{
    RespOptions o;
    o.clients = 1;
    o.requests = requests;
    o.tests = {test};
    return o;
}

// One RESP client sending `requests` of `test` to a server that answers each arrival with `reply`.
std::shared_ptr<RespWorker> resp_against(const std::string &reply, RespTest test, uint64_t requests)
{
    Runtime rt(tcp_config(1));
    rt.start();
    auto listener = fake_server(rt, [reply](const std::string &) { return reply; });
    RespOptions o = resp_options(test, requests);
    auto pool = std::make_shared<RequestPool>(o.requests);
    std::shared_ptr<RespWorker> worker;
    run_one(rt, listener->port(), 1, [&](unsigned) {
        worker = std::make_shared<RespWorker>(test, o, pool, 1);
        return worker;
    });
    return worker;
}

} // namespace

TEST_CASE("a sweep over loopback TCP measures every round trip and every acknowledged byte", "[loopback]")
{
    Runtime rt(tcp_config(2));
    rt.start();
    auto listener = rt.listen(loopback_any_port(), [](const ConnectionPtr &c) { serve_bench_connection(c); });
    SweepOptions o;
    o.connections = 3;
    o.iterations = 200;
    o.sizes = {64, 100000};
    o.tests = {TestKind::Latency, TestKind::Throughput};
    SweepReport r = run_sweep(rt, {"127.0.0.1", listener->port(), ""}, o);

    CHECK(r.error_count() == 0);
    CHECK(r.transport == "tcp");
    CHECK(r.connections.at({"tcp", ""}) == 12);
    REQUIRE(r.latency.size() == 2);
    REQUIRE(r.throughput.size() == 2);
    for (const LatencyResult &l : r.latency) {
        CHECK(l.round_trip_ns.count() == 600);
        CHECK(l.round_trip_ns.min() > 0);
        CHECK(l.seconds > 0);
    }
    for (const ThroughputResult &t : r.throughput) {
        CHECK(t.bytes == 3 * 200 * t.size);
        CHECK(t.messages == 600);
        CHECK(t.mb_per_s() > 0);
    }
}

TEST_CASE("throughput both ways counts every byte that went out and came back, copying and zero-copy", "[loopback]")
{
    const bool zero_copy = GENERATE(false, true);
    CAPTURE(zero_copy);
    Runtime rt(tcp_config(2));
    rt.start();
    auto listener = rt.listen(loopback_any_port(), [](const ConnectionPtr &c) { serve_bench_connection(c); });
    SweepOptions o;
    o.connections = 2;
    o.iterations = 300;
    o.sizes = {64, 100000};
    o.tests = {TestKind::Throughput};
    o.bidirectional = true;
    o.zero_copy = zero_copy;
    SweepReport r = run_sweep(rt, {"127.0.0.1", listener->port(), ""}, o);
    CHECK(r.error_count() == 0);
    REQUIRE(r.throughput.size() == 2);
    for (const ThroughputResult &t : r.throughput) {
        CHECK(t.bidirectional);
        CHECK(t.bytes == 2 * 2 * 300 * t.size); // two connections, each way
        CHECK(t.messages == 2 * 2 * 300);
        CHECK(t.mb_per_s() > 0);
    }
    CHECK(sweep_table(r).find("both directions at once") != std::string::npos);
}

TEST_CASE("throughput both ways fails on an echo that is short or altered", "[loopback]")
{
    // What the server sends back for 50 messages of 1000 bytes.
    auto [name, reply] = GENERATE(table<const char *, std::function<std::string(const std::string &)>>({
        {"short", [](const std::string &in) { return in.substr(0, in.size() / 2); }},
        {"altered", [](const std::string &in) { return std::string(in.size(), 'y'); }},
    }));
    CAPTURE(name);
    Runtime rt(tcp_config(1));
    rt.start();
    bool hello_seen = false;
    auto listener = fake_server(rt, [&hello_seen, reply = reply](const std::string &in) {
        std::string payload = in;
        if (!hello_seen) { // the echo server drops the hello
            hello_seen = true;
            payload = payload.substr(16);
        }
        return reply(payload);
    });
    std::shared_ptr<ThroughputWorker> worker;
    run_one(
        rt, listener->port(), 1,
        [&worker](unsigned) {
            worker = std::make_shared<ThroughputWorker>(1000, 50, 0, false, true);
            return worker;
        },
        2);
    REQUIRE(worker);
    CHECK_FALSE(worker->error.empty());
    CHECK(worker->acknowledged != worker->bytes);
}

TEST_CASE("a corrupted echo is reported as an error, not measured, on the copying and the zero-copy path", "[loopback]")
{
    const bool zero_copy = GENERATE(false, true);
    CAPTURE(zero_copy);
    Runtime rt(tcp_config(1));
    rt.start();
    bool hello_seen = false;
    auto listener = fake_server(rt, [&hello_seen](const std::string &in) {
        std::string out = in;
        if (!hello_seen) { // drop the hello, corrupt the first echo
            hello_seen = true;
            out = out.substr(16);
        }
        if (!out.empty()) out[out.size() - 1] ^= 1;
        return out;
    });
    std::shared_ptr<LatencyWorker> worker;
    run_one(rt, listener->port(), 1, [&worker, zero_copy](unsigned) {
        worker = std::make_shared<LatencyWorker>(64, 100, 0, zero_copy);
        return worker;
    });
    REQUIRE(worker);
    CHECK(worker->error.find("differs from what was sent") != std::string::npos);
    CHECK(worker->histogram.count() == 0);
    // The echo was checked where it lay: in a borrowed buffer, or copied.
    CHECK((worker->stats.zero_copy_recvs > 0) == zero_copy);
}

TEST_CASE("the zero-copy sweep over loopback TCP runs the zero-copy path on both sides and says so", "[loopback]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    auto listener = rt.listen(loopback_any_port(), [](const ConnectionPtr &c) { serve_bench_connection(c); });
    SweepOptions o;
    o.iterations = 100;
    o.sizes = {64, 300000};
    o.tests = {TestKind::Latency, TestKind::Throughput};
    o.zero_copy = true;
    SweepReport r = run_sweep(rt, {"127.0.0.1", listener->port(), ""}, o);
    CHECK(r.error_count() == 0);
    for (const LatencyResult &l : r.latency) {
        CHECK(l.io_path == "zero-copy");
        CHECK(l.round_trip_ns.count() == 100);
    }
    for (const ThroughputResult &t : r.throughput) {
        CHECK(t.io_path == "zero-copy");
        CHECK(t.bytes == 100 * t.size);
    }
}

TEST_CASE("a transport that lent no buffers is reported as the copying fallback, never as zero-copy", "[report]")
{
    tw_conn_stats none{};
    CHECK(io_path(false, none) == "copy");
    CHECK(io_path(true, none).find("fell back") != std::string::npos);
    tw_conn_stats sends_only{};
    sends_only.zero_copy_sends = 5;
    CHECK(io_path(true, sends_only).find("copied receives") != std::string::npos);
    tw_conn_stats both = sends_only;
    both.zero_copy_recvs = 3;
    CHECK(io_path(true, both) == "zero-copy");
}

TEST_CASE("a test whose server never answers is aborted by the stall watchdog", "[loopback]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    auto listener = fake_server(rt, [](const std::string &) { return std::string(); });
    std::shared_ptr<LatencyWorker> worker;
    run_one(
        rt, listener->port(), 1,
        [&worker](unsigned) {
            worker = std::make_shared<LatencyWorker>(64, 100, 0);
            return worker;
        },
        1);
    REQUIRE(worker);
    CHECK(worker->error.find("no progress for") == 0);
}

TEST_CASE("the bench server closes a connection whose hello is not one", "[loopback]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    auto listener = rt.listen(loopback_any_port(), [](const ConnectionPtr &c) { serve_bench_connection(c); });
    CloseInfo end;
    bool closed = false;
    rt.connect({"127.0.0.1", listener->port()}, [&](const ConnectionPtr &c, const std::string &) {
        REQUIRE(c);
        c->on_close([&](Connection &, const CloseInfo &info) {
            end = info;
            closed = true;
            rt.stop(false);
        });
        c->write("GET / HTTP/1.0\r\n\r\n");
    });
    Timer dog(rt.loop(0), [&rt] { rt.stop(false); });
    dog.start(std::chrono::seconds(20));
    rt.run();
    CHECK(closed);
    CHECK(end.by_peer);
}

TEST_CASE("a malformed RESP reply counts as an error and ends that client", "[resp][loopback]")
{
    auto worker = resp_against("+OK\n", RespTest::Set, 10);
    REQUIRE(worker);
    CHECK(worker->error.find("malformed reply to SET: line feed without carriage return") == 0);
    CHECK(worker->replies == 0);
    CHECK(worker->error_replies == 1);
}

TEST_CASE("well-formed replies of the wrong type count as errors, one per request", "[resp][loopback]")
{
    auto worker = resp_against(":1\r\n", RespTest::Get, 25);
    REQUIRE(worker);
    CHECK(worker->error.empty());
    CHECK(worker->replies == 0);
    CHECK(worker->error_replies == 25);
    CHECK(worker->first_error == "unexpected integer reply to GET");
}

TEST_CASE("pipelined requests all get their replies and their latencies", "[resp][loopback]")
{
    Runtime rt(tcp_config(2));
    rt.start();
    // Answers each complete SET (its value is "xxx") with +OK, however the requests were split.
    auto listener = rt.listen(loopback_any_port(), [](const ConnectionPtr &c) {
        auto seen = std::make_shared<std::string>();
        c->on_data([seen](Connection &conn, Buffer &in) {
            *seen += in.take(in.size());
            size_t at;
            while ((at = seen->find("xxx\r\n")) != std::string::npos) {
                seen->erase(0, at + 5);
                conn.write("+OK\r\n");
            }
        });
    });
    RespOptions o = resp_options(RespTest::Set, 1000);
    o.clients = 4;
    o.pipeline = 16;
    auto pool = std::make_shared<RequestPool>(o.requests);
    std::vector<std::shared_ptr<RespWorker>> workers;
    run_one(rt, listener->port(), 4, [&](unsigned i) {
        workers.push_back(std::make_shared<RespWorker>(RespTest::Set, o, pool, i));
        return workers.back();
    });
    uint64_t replies = 0, samples = 0;
    for (const auto &w : workers) {
        CHECK(w->error == "");
        CHECK(w->error_replies == 0);
        replies += w->replies;
        samples += w->latency_ns.count();
    }
    CHECK(replies == 1000);
    CHECK(samples == 1000);
}
