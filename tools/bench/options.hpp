// SPDX-License-Identifier: MIT
// What the command line asked for, one struct per mode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace twinwire::bench {

/// Settings every mode passes to the twinwire runtime.
struct RuntimeOptions {
    std::string config_file;              ///< --config: a twinwire INI file
    std::optional<std::string> transport; ///< --transport auto, tcp, NAME or NAME,NAME,...
    std::optional<unsigned> threads;      ///< --threads N (event-loop threads)
    std::optional<std::string> device;    ///< --device NAME: rdma.device (as perftest's -d)
    std::optional<unsigned> gid_index;    ///< --gid-index N: rdma.gid_index (as perftest's -x)
    std::vector<std::string> args;        ///< the whole command line (after the program name), for the JSON
};

/// Where a client connects.
struct TargetOptions {
    std::string host;
    uint16_t port = 0;
    std::string source; ///< --source: local address to bind (RDMA: picks the device)
};

enum class TestKind { Latency, Throughput };

/// The latency / throughput sweep of `client` and `local`.
struct SweepOptions {
    unsigned connections = 1;
    std::optional<double> duration_s;   ///< per test and size
    std::optional<uint64_t> iterations; ///< per connection, test and size
    std::vector<size_t> sizes;
    std::vector<TestKind> tests;
    bool json = false;
    bool csv = false;
    unsigned stall_timeout_s = 30; ///< abort a test that makes no progress this long
    bool zero_copy = false;        ///< --zero-copy: lent send buffers, borrowed receive buffers
    bool bidirectional = false;    ///< -b: throughput in both directions at once (the server echoes)

    double duration_or_default() const { return duration_s.value_or(iterations ? 0.0 : kDefaultDuration); }
    static constexpr double kDefaultDuration = 3.0;
};

struct ServerOptions {
    RuntimeOptions runtime;
    std::string listen; ///< "" = the config's listen_address
    int port = -1;      ///< -1 = the config's listen_port
};

struct ClientOptions {
    RuntimeOptions runtime;
    TargetOptions target;
    SweepOptions sweep;
};

struct LocalOptions {
    RuntimeOptions runtime;
    std::string listen = "127.0.0.1";
    std::string source;
    SweepOptions sweep;
};

/// The requests of redis-benchmark's tests of the same names.
enum class RespTest { Set, Get, Incr, Lpush, Mget };

struct RespOptions {
    RuntimeOptions runtime;
    TargetOptions target;
    unsigned clients = 50;
    uint64_t requests = 100000; ///< per test, over all clients
    unsigned pipeline = 1;
    size_t data_size = 3;
    uint64_t keyspace = 100000;
    std::vector<RespTest> tests{RespTest::Set, RespTest::Get};
    bool json = false;
    bool csv = false;
    unsigned stall_timeout_s = 30;
};

/// `rma`: one-sided remote memory against the stream, in one process.
struct RmaOptions {
    RuntimeOptions runtime;
    std::string listen = "127.0.0.1";
    std::string source;
    std::vector<size_t> sizes{64 * 1024, 1024 * 1024};
    std::vector<std::string> tests{"stream", "rma-write", "rma-read"};
    double duration_s = 2.0; ///< per test, size and round
    unsigned window = 8;     ///< transfers in flight
    unsigned rounds = 1;     ///< the tests alternate within each round
};

enum class Mode { Help, Server, Client, Local, Resp, Rma };

struct Invocation {
    Mode mode = Mode::Help;
    std::string text; ///< Mode::Help: the --help (or --version) text to print
    ServerOptions server;
    ClientOptions client;
    LocalOptions local;
    RespOptions resp;
    RmaOptions rma;
};

const char *to_string(TestKind kind);
const char *to_string(RespTest test);

} // namespace twinwire::bench
