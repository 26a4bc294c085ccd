// SPDX-License-Identifier: MIT
#include "args.hpp"
#include "runtime_setup.hpp"

#include <catch2/catch.hpp>

using namespace twinwire::bench;

namespace {

Invocation parse(std::initializer_list<std::string> words) { return parse_args(std::vector<std::string>(words)); }

std::string error_of(std::initializer_list<std::string> words)
{
    try {
        parse(words);
    } catch (const ArgError &e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST_CASE("message sizes accept plain bytes and binary k, M, G suffixes", "[args]")
{
    CHECK(parse_size("64", "--sizes") == 64);
    CHECK(parse_size("4k", "--sizes") == 4096);
    CHECK(parse_size("64K", "--sizes") == 65536);
    CHECK(parse_size("1M", "--sizes") == 1048576);
    CHECK(parse_size("2MiB", "--sizes") == 2097152);
    CHECK(parse_size_list("64,4k,64k,1M", "--sizes") == std::vector<size_t>{64, 4096, 65536, 1048576});
}

TEST_CASE("bad message sizes are refused with the option named", "[args]")
{
    for (const char *bad : {"0", "", "4x", "k", "-1", "65M", "1G", "99999999999999"}) {
        INFO("size '" << bad << "'");
        try {
            parse_size(bad, "--sizes");
            FAIL("accepted");
        } catch (const ArgError &e) {
            CHECK(std::string(e.what()).find("--sizes") == 0);
        }
    }
    CHECK(error_of({"client", "--host", "h", "--port", "1", "--sizes", "64,,4k"}).find("empty item") !=
          std::string::npos);
}

TEST_CASE("client defaults: one connection, the four sizes, both tests, 3 s each", "[args]")
{
    Invocation inv = parse({"client", "--host", "10.0.0.2", "--port", "7379"});
    REQUIRE(inv.mode == Mode::Client);
    const ClientOptions &o = inv.client;
    CHECK(o.target.host == "10.0.0.2");
    CHECK(o.target.port == 7379);
    CHECK(o.sweep.connections == 1);
    CHECK(o.sweep.sizes == std::vector<size_t>{64, 4096, 65536, 1048576});
    CHECK(o.sweep.tests == std::vector<TestKind>{TestKind::Latency, TestKind::Throughput});
    CHECK(o.sweep.duration_or_default() == 3.0);
    CHECK_FALSE(o.sweep.json);
    CHECK_FALSE(o.sweep.bidirectional);
    CHECK_FALSE(o.runtime.transport.has_value());
}

TEST_CASE("client options are read in both --name value and --name=value forms", "[args]")
{
    Invocation inv = parse({"client", "--host=h", "--port=9", "--transport", "RDMA", "--source", "10.77.0.1",
                            "--connections=4", "--iterations", "500", "--sizes=4k", "--test", "latency", "--json",
                            "--threads", "2", "--config", "/etc/tw.conf"});
    const ClientOptions &o = inv.client;
    CHECK(o.target.host == "h");
    CHECK(o.target.port == 9);
    CHECK(o.target.source == "10.77.0.1");
    CHECK(o.runtime.transport == std::optional<std::string>("rdma"));
    CHECK(o.runtime.threads == std::optional<unsigned>(2));
    CHECK(o.runtime.config_file == "/etc/tw.conf");
    CHECK(o.sweep.connections == 4);
    CHECK(o.sweep.iterations == std::optional<uint64_t>(500));
    CHECK(o.sweep.sizes == std::vector<size_t>{4096});
    CHECK(o.sweep.tests == std::vector<TestKind>{TestKind::Latency});
    CHECK(o.sweep.json);
}

TEST_CASE("client mistakes get errors that say what is wrong", "[args]")
{
    CHECK(error_of({"client", "--port", "1"}) == "client: --host is required");
    CHECK(error_of({"client", "--host", "h"}) == "client: --port is required");
    CHECK(error_of({"client", "--host", "h", "--port", "0"}).find("client: --port: 0 is out of range") == 0);
    CHECK(error_of({"client", "--host", "h", "--port", "http"}).find("client: --port: 'http' is not a number") == 0);
    CHECK(error_of({"client", "--host", "h", "--port", "1", "--duration", "2", "--iterations", "5"}) ==
          "client: give --duration or --iterations, not both");
    CHECK(error_of({"client", "--host", "h", "--port", "1", "--duration", "0"}).find("client: --duration") == 0);
    CHECK(error_of({"client", "--host", "h", "--port", "1", "--transport", "u/dp"})
              .find("client: --transport: 'u/dp': ") == 0);
    CHECK(error_of({"client", "--host", "h", "--port", "1", "--test", "fast"}).find("client: --test: 'fast'") == 0);
    CHECK(error_of({"client", "--host", "h", "--port", "1", "--frobnicate"}) == "client: unknown option --frobnicate");
    CHECK(error_of({"client", "--host"}) == "client: --host: 1 required ADDR missing");
    CHECK(error_of({"client", "--json=maybe"}).find("client: Could not convert: --json = maybe") == 0);
    CHECK(error_of({"client", "--host", "h", "--port", "1", "stray"}) == "client: unexpected argument 'stray'");
    CHECK(error_of({"--json", "client", "--host", "h", "--port", "1"}) == "client: unknown option --json");
    CHECK(error_of({"bounce"}).find("unknown mode 'bounce'") == 0);
    CHECK(error_of({}).find("no mode given") == 0);
}

TEST_CASE("server and local take their own options and refuse the client's", "[args]")
{
    Invocation s = parse({"server", "--listen", "10.77.0.2", "--port", "0", "--transport", "tcp", "--threads", "3"});
    REQUIRE(s.mode == Mode::Server);
    CHECK(s.server.listen == "10.77.0.2");
    CHECK(s.server.port == 0);
    CHECK(s.server.runtime.threads == std::optional<unsigned>(3));
    CHECK(error_of({"server", "--host", "h"}) == "server: unknown option --host");

    Invocation l = parse({"local", "--duration", "0.5", "--sizes", "64"});
    REQUIRE(l.mode == Mode::Local);
    CHECK(l.local.listen == "127.0.0.1");
    CHECK(l.local.sweep.duration_or_default() == 0.5);
    CHECK(error_of({"local", "--host", "h"}) == "local: unknown option --host");
}

TEST_CASE("resp defaults match redis-benchmark's and its options parse", "[args]")
{
    Invocation d = parse({"resp"});
    REQUIRE(d.mode == Mode::Resp);
    CHECK(d.resp.target.host == "127.0.0.1");
    CHECK(d.resp.target.port == 6379);
    CHECK(d.resp.clients == 50);
    CHECK(d.resp.requests == 100000);
    CHECK(d.resp.pipeline == 1);
    CHECK(d.resp.data_size == 3);
    CHECK(d.resp.keyspace == 100000);
    CHECK(d.resp.tests == std::vector<RespTest>{RespTest::Set, RespTest::Get});

    Invocation r = parse({"resp", "--host", "::1", "--port", "7000", "--clients", "8", "--requests", "1000",
                          "--pipeline", "16", "--data-size", "0", "--keyspace", "10", "--tests", "GET", "--json"});
    CHECK(r.resp.target.host == "::1");
    CHECK(r.resp.clients == 8);
    CHECK(r.resp.pipeline == 16);
    CHECK(r.resp.data_size == 0);
    CHECK(r.resp.keyspace == 10);
    CHECK(r.resp.tests == std::vector<RespTest>{RespTest::Get});
    CHECK(r.resp.json);
    CHECK(error_of({"resp", "--tests", "set,hmset"})
              .find("resp: --tests: 'hmset' is not a test; expected a list of set, get, "
                    "incr, lpush, mget") == 0);
    CHECK(error_of({"resp", "--keyspace", "0"}).find("resp: --keyspace: 0 is out of range") == 0);
    CHECK(error_of({"resp", "--clients", "0"}).find("resp: --clients") == 0);
}

TEST_CASE("resp runs redis-benchmark's incr, lpush and mget tests beside set and get", "[args]")
{
    Invocation r = parse({"resp", "--tests", "incr,LPUSH,mget,set"});
    CHECK(r.resp.tests == std::vector<RespTest>{RespTest::Incr, RespTest::Lpush, RespTest::Mget, RespTest::Set});
    CHECK(std::string(to_string(RespTest::Lpush)) == "LPUSH");
}

TEST_CASE("short options mean what perftest, sockperf and redis-benchmark users expect, per mode", "[args]")
{
    // perftest / sockperf: -s size, -n iterations, -D duration, -d device, -x GID index, -p port.
    Invocation c = parse({"client", "--host", "h", "-p", "7000", "-s", "64,4k", "-n", "500", "-c", "3", "-t", "latency",
                          "-d", "mlx5_0", "-x", "3"});
    CHECK(c.client.target.port == 7000);
    CHECK(c.client.sweep.sizes == std::vector<size_t>{64, 4096});
    CHECK(c.client.sweep.iterations == 500u);
    CHECK(c.client.sweep.connections == 3);
    CHECK(c.client.sweep.tests == std::vector<TestKind>{TestKind::Latency});
    CHECK(c.client.runtime.device == "mlx5_0");
    CHECK(c.client.runtime.gid_index == 3u);
    CHECK(parse({"local", "-D", "0.5"}).local.sweep.duration_s == 0.5);
    CHECK(parse({"local", "-b"}).local.sweep.bidirectional); // perftest's -b: both directions
    CHECK(parse({"client", "--host", "h", "-p", "1", "--bidirectional"}).client.sweep.bidirectional);
    CHECK(parse({"server", "-p", "9000", "-d", "rxe0"}).server.runtime.device == "rxe0");
    // redis-benchmark: -c clients, -n requests, -P pipeline, -d data size, -r keyspace, -t tests.
    Invocation r =
        parse({"resp", "-p", "6380", "-c", "4", "-n", "99", "-P", "8", "-d", "100", "-r", "7", "-t", "get,incr"});
    CHECK(r.resp.target.port == 6380);
    CHECK(r.resp.clients == 4);
    CHECK(r.resp.requests == 99);
    CHECK(r.resp.pipeline == 8);
    CHECK(r.resp.data_size == 100);
    CHECK(r.resp.keyspace == 7);
    CHECK(r.resp.tests == std::vector<RespTest>{RespTest::Get, RespTest::Incr});
    CHECK(error_of({"resp", "-D", "1"}).find("resp: unknown option -D") == 0);
    CHECK(error_of({"client", "--host", "h", "--port", "1", "-s"}) == "client: --sizes: 1 required LIST missing");
    CHECK(error_of({"client", "--host", "h", "--port", "1", "-zz"}) == "client: unknown option -zz");
}

TEST_CASE("--csv and --json are each one output format, not both", "[args]")
{
    CHECK(parse({"local", "--csv"}).local.sweep.csv);
    CHECK(parse({"resp", "--csv"}).resp.csv);
    CHECK(error_of({"local", "--csv", "--json"}).find("local: give --json or --csv, not both") == 0);
    CHECK(error_of({"resp", "--json", "--csv"}).find("resp: give --json or --csv, not both") == 0);
}

TEST_CASE("--device and --gid-index become rdma.device and rdma.gid_index with their origin", "[args]")
{
    Invocation c = parse({"local", "--device", "rxe0", "--gid-index", "1"});
    twinwire::Config config = make_config(c.local.runtime);
    CHECK(config.get("rdma.device") == "rxe0");
    CHECK(config.find("rdma.device")->origin == "--device");
    CHECK(config.get("rdma.gid_index") == "1");
    CHECK(error_of({"local", "--gid-index", "x"}).find("local: --gid-index: 'x' is not a number") == 0);
}

TEST_CASE("--help alone lists the modes; --help after a mode gives that mode's options", "[args]")
{
    Invocation top = parse({"--help"});
    CHECK(top.mode == Mode::Help);
    CHECK(top.text.find("Usage: twinwire-bench [OPTIONS] [SUBCOMMAND]") != std::string::npos);
    for (const char *mode : {"server", "client", "local", "resp"})
        CHECK(top.text.find(std::string("\n  ") + mode) != std::string::npos);
    Invocation client = parse({"client", "--help"}); // --host is required, but not to ask for help
    CHECK(client.mode == Mode::Help);
    CHECK(client.text.find("Usage: twinwire-bench client") != std::string::npos);
    CHECK(client.text.find("-s,--sizes LIST") != std::string::npos);
    CHECK(client.text.find("-d,--device DEV") != std::string::npos);
    Invocation resp = parse({"resp", "--help"});
    CHECK(resp.text.find("-d,--data-size N") != std::string::npos);
    CHECK(resp.text.find("-P,--pipeline N") != std::string::npos);
    CHECK(parse({"--version"}).text.find("twinwire-bench ") == 0);
}

TEST_CASE("an option given twice counts the last time, as the configuration's last one wins", "[args]")
{
    Invocation c = parse({"client", "--host", "a", "--host", "b", "-p", "1", "--port", "2", "-s", "64", "-s", "1k"});
    CHECK(c.client.target.host == "b");
    CHECK(c.client.target.port == 2);
    CHECK(c.client.sweep.sizes == std::vector<size_t>{1024});
}
