// SPDX-License-Identifier: MIT
#include "args.hpp"

#include <twinwire/config.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <map>

namespace twinwire::bench {
namespace {

// Largest message: the framework refuses writes beyond write_buffer_limit (64M by default).
constexpr size_t kMaxMessage = size_t(64) << 20;

std::string lower(std::string s)
{
    for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

uint64_t parse_uint(const std::string &text, const std::string &option, uint64_t min, uint64_t max)
{
    const std::string expected = "expected an integer " + std::to_string(min) + ".." + std::to_string(max);
    if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw ArgError(option + ": '" + text + "' is not a number; " + expected);
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE || v < min || v > max) throw ArgError(option + ": " + text + " is out of range; " + expected);
    return v;
}

double parse_seconds(const std::string &text, const std::string &option)
{
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v <= 0 || v > 86400)
        throw ArgError(option + ": '" + text + "' is not a duration; expected seconds, more than 0 and at most 86400");
    return v;
}

std::vector<std::string> split(const std::string &text, char sep)
{
    std::vector<std::string> parts;
    size_t start = 0;
    for (;;) {
        size_t at = text.find(sep, start);
        parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
        if (at == std::string::npos) return parts;
        start = at + 1;
    }
}

// An option with a value that `set` parses (throwing ArgError that names the
// option) into the mode's options; given twice, the last one counts.
using Setter = std::function<void(const std::string &text, const std::string &option)>;

void add_value(CLI::App *app, const std::string &names, const std::string &type, const std::string &help, Setter set)
{
    const std::string long_name = names.substr(names.find("--"));
    app->add_option_function<std::string>(
           names, [set, long_name](const std::string &text) { set(text, long_name); }, help)
        ->type_name(type);
}

void add_uint(CLI::App *app, const std::string &names, const std::string &help, uint64_t min, uint64_t max,
              std::function<void(uint64_t)> store)
{
    add_value(app, names, "N", help + " [" + std::to_string(min) + ".." + std::to_string(max) + "]",
              [=](const std::string &text, const std::string &option) { store(parse_uint(text, option, min, max)); });
}

void add_nonempty(CLI::App *app, const std::string &names, const std::string &type, const std::string &help,
                  std::string *out, const char *what)
{
    add_value(app, names, type, help, [out, what](const std::string &text, const std::string &option) {
        if (text.empty()) throw ArgError(option + ": empty " + what);
        *out = text;
    });
}

/// Settings every mode passes to the runtime.  `device_short`: perftest's -d
/// where the mode has no other use for it.
void add_runtime(CLI::App *app, RuntimeOptions &o, bool device_short)
{
    add_value(app, "--config", "FILE", "a twinwire configuration file (INI)",
              [&o](const std::string &text, const std::string &option) {
                  if (text.empty()) throw ArgError(option + ": empty file name");
                  o.config_file = text;
              });
    add_value(app, "--transport", "T", "auto, tcp, a plugin's name, or a list (NAME,tcp)",
              [&o](const std::string &text, const std::string &option) {
                  std::string v = lower(text);
                  try {
                      twinwire::parse_transport_list(v);
                  } catch (const twinwire::ConfigError &e) {
                      throw ArgError(option + ": '" + v + "': " + e.what());
                  }
                  o.transport = v;
              });
    add_uint(app, "--threads", "event-loop threads", 1, 256, [&o](uint64_t v) { o.threads = unsigned(v); });
    add_value(app, device_short ? "-d,--device" : "--device", "DEV", "rdma.device: the RDMA device (perftest's -d)",
              [&o](const std::string &text, const std::string &option) {
                  if (text.empty()) throw ArgError(option + ": empty device name");
                  o.device = text;
              });
    add_uint(app, "-x,--gid-index", "rdma.gid_index (perftest's -x)", 0, 65535,
             [&o](uint64_t v) { o.gid_index = unsigned(v); });
}

void add_target(CLI::App *app, TargetOptions &o, bool required)
{
    add_nonempty(app, "--host", "ADDR", "the server's address", &o.host, "address");
    add_uint(app, "-p,--port", "the server's port", 1, 65535, [&o](uint64_t v) { o.port = uint16_t(v); });
    add_value(app, "--source", "ADDR", "local address to bind (RDMA: picks the device)",
              [&o](const std::string &text, const std::string &) { o.source = text; });
    if (required)
        for (const char *name : {"--host", "--port"}) app->get_option(name)->required();
}

void add_output(CLI::App *app, bool *json, bool *csv, unsigned *stall)
{
    app->add_flag("--json", *json, "one JSON document: results, version, time, host, configuration");
    app->add_flag("--csv", *csv, "a header line and one line per result");
    add_uint(app, "--stall-timeout", "abort a test that makes no progress this many seconds (30)", 1, 3600,
             [stall](uint64_t v) { *stall = unsigned(v); });
}

/// The sweep of client and local, with perftest's and sockperf's short options.
void add_sweep(CLI::App *app, SweepOptions &o)
{
    add_uint(app, "-c,--connections", "connections (1)", 1, 10000, [&o](uint64_t v) { o.connections = unsigned(v); });
    add_value(app, "-D,--duration", "S", "seconds per test and size (3)",
              [&o](const std::string &text, const std::string &option) { o.duration_s = parse_seconds(text, option); });
    add_uint(app, "-n,--iterations", "round trips / messages per connection, test and size", 1, 1000000000000ull,
             [&o](uint64_t v) { o.iterations = v; });
    add_value(app, "-s,--sizes", "LIST", "message sizes (64,4k,64k,1M)",
              [&o](const std::string &text, const std::string &option) { o.sizes = parse_size_list(text, option); });
    add_value(app, "-t,--test", "T", "latency, throughput or both (both)",
              [&o](const std::string &text, const std::string &option) {
                  std::string v = lower(text);
                  if (v == "latency") o.tests = {TestKind::Latency};
                  else if (v == "throughput") o.tests = {TestKind::Throughput};
                  else if (v == "both") o.tests = {TestKind::Latency, TestKind::Throughput};
                  else throw ArgError(option + ": '" + v + "' is not a test; expected latency, throughput or both");
              });
    app->add_flag("--zero-copy", o.zero_copy,
                  "send from lent transport buffers and read from borrowed ones, client and server (a transport "
                  "that lends none: the copying path, and the result says so)");
    app->add_flag("-b,--bidirectional", o.bidirectional,
                  "throughput in both directions at once: the server echoes the stream, and the rate counts both "
                  "directions, as ib_write_bw -b does");
    add_output(app, &o.json, &o.csv, &o.stall_timeout_s);
}

void refuse_json_and_csv(bool json, bool csv)
{
    if (json && csv) throw ArgError("give --json or --csv, not both");
}

void finish_sweep(SweepOptions &o)
{
    refuse_json_and_csv(o.json, o.csv);
    if (o.duration_s && o.iterations) throw ArgError("give --duration or --iterations, not both");
    if (o.sizes.empty()) o.sizes = {64, 4096, 65536, size_t(1) << 20};
    if (o.tests.empty()) o.tests = {TestKind::Latency, TestKind::Throughput};
}

const char kFooter[] = "Live progress goes to stderr once a second; the result table (or, with --json, one JSON\n"
                       "document with the version, time, host, command line and every configuration key; with --csv,\n"
                       "a header and one line per result) to stdout.  The first 10 round trips of each latency test\n"
                       "warm up and are not counted.  A test that makes no progress for --stall-timeout seconds is\n"
                       "aborted and reported as failed.\n"
                       "Configuration: --config FILE, then TWINWIRE_* environment variables, then the options (the\n"
                       "last one wins).\n"
                       "Exit status: 0 success; 1 a test failed or errors were counted; 2 bad arguments.";

/// A mode's help: what it does, then what every mode shares.
void describe(CLI::App *app, const std::string &text) { app->footer(text + "\n\n" + kFooter); }

void add_server(CLI::App *app, ServerOptions &o)
{
    describe(app, "Echo (latency) and sink (throughput) server; each connection says which it wants.\n"
                  "Prints \"listening on ADDR:PORT\" on stdout; stops on SIGINT/SIGTERM.");
    add_runtime(app, o.runtime, true);
    add_nonempty(app, "--listen", "ADDR", "address to listen on (the configuration's listen_address)", &o.listen,
                 "address");
    add_uint(app, "-p,--port", "port to listen on, 0 for any (the configuration's listen_port)", 0, 65535,
             [&o](uint64_t v) { o.port = int(v); });
}

void add_client(CLI::App *app, ClientOptions &o)
{
    describe(app, "Latency: ping-pong of one message per connection; mean/p50/p99/p99.9 of every round trip\n"
                  "(rt, us) and one way (ow = rt / 2, what perftest and sockperf report).  Throughput: one\n"
                  "direction, the server acknowledges the bytes it received at the end; MB/s (MB = 2^20 bytes,\n"
                  "as perftest counts), Gb/s (10^9 bits, as link rates count) and messages/s.  Short options\n"
                  "as perftest and sockperf spell them.");
    add_runtime(app, o.runtime, true);
    add_target(app, o.target, true);
    add_sweep(app, o.sweep);
}

void add_local(CLI::App *app, LocalOptions &o)
{
    describe(app, "Server and client in one process; the client's tests and options.");
    add_runtime(app, o.runtime, true);
    add_nonempty(app, "--listen", "ADDR", "address of the server (127.0.0.1)", &o.listen, "address");
    add_value(app, "--source", "ADDR", "local address the client binds",
              [&o](const std::string &text, const std::string &) { o.source = text; });
    add_sweep(app, o.sweep);
}

void add_resp(CLI::App *app, RespOptions &o)
{
    describe(app, "Redis protocol load (like redis-benchmark, whose short options these are): SET and GET\n"
                  "key:<random>, INCR counter:<random>, LPUSH mylist, MGET of 10 keys, over RESP2; strict\n"
                  "reply checks; requests/s and p50/p99/p99.9 latency (ms).  Exits 1 when any reply was an error.");
    o.target.host = "127.0.0.1";
    o.target.port = 6379;
    add_runtime(app, o.runtime, false);
    add_target(app, o.target, false);
    app->get_option("--host")->description("the server's address (127.0.0.1)");
    app->get_option("--port")->description("the server's port (6379)");
    add_uint(app, "-c,--clients", "connections (50)", 1, 10000, [&o](uint64_t v) { o.clients = unsigned(v); });
    add_uint(app, "-n,--requests", "requests per test, over all clients (100000)", 1, 1000000000000ull,
             [&o](uint64_t v) { o.requests = v; });
    add_uint(app, "-P,--pipeline", "requests in flight per client (1)", 1, 100000,
             [&o](uint64_t v) { o.pipeline = unsigned(v); });
    add_uint(app, "-d,--data-size", "bytes of SET / LPUSH values (3)", 0, 64u << 20,
             [&o](uint64_t v) { o.data_size = size_t(v); });
    add_uint(app, "-r,--keyspace", "random keys per test (100000)", 1, 1000000000000ull,
             [&o](uint64_t v) { o.keyspace = v; });
    add_value(app, "-t,--tests", "LIST", "tests to run, of " + resp_test_names() + " (set,get)",
              [&o](const std::string &text, const std::string &option) {
                  o.tests.clear();
                  for (const std::string &item : split(lower(text), ',')) {
                      auto test = resp_test_named(item);
                      if (!test)
                          throw ArgError(option + ": '" + item + "' is not a test; expected a list of " +
                                         resp_test_names());
                      o.tests.push_back(*test);
                  }
              });
    add_output(app, &o.json, &o.csv, &o.stall_timeout_s);
}

void add_rma(CLI::App *app, RmaOptions &o)
{
    describe(app, "One-sided remote memory against the byte stream, server and client in one process: per round\n"
                  "and size, `stream` (one direction; the server times what it received), `rma-write` and\n"
                  "`rma-read` (a window of transfers in flight against one exposure; every read compared with\n"
                  "what the exposure holds, every write slot checked by the server).  MB/s = 2^20 bytes/s.\n"
                  "Exits 1 when a transfer failed or a check found other bytes.");
    add_runtime(app, o.runtime, true);
    add_nonempty(app, "--listen", "ADDR", "address of the server (127.0.0.1)", &o.listen, "address");
    add_value(app, "--source", "ADDR", "local address the client binds",
              [&o](const std::string &text, const std::string &) { o.source = text; });
    add_value(app, "-s,--sizes", "LIST", "transfer sizes (64k,1M)",
              [&o](const std::string &text, const std::string &option) { o.sizes = parse_size_list(text, option); });
    add_value(app, "-t,--tests", "LIST", "of stream, rma-write, rma-read (all three)",
              [&o](const std::string &text, const std::string &option) {
                  o.tests.clear();
                  for (const std::string &item : split(lower(text), ',')) {
                      if (item != "stream" && item != "rma-write" && item != "rma-read")
                          throw ArgError(option + ": '" + item +
                                         "' is not a test; expected stream, rma-write, rma-read");
                      o.tests.push_back(item);
                  }
              });
    add_uint(app, "-D,--duration", "seconds per test, size and round (2)", 1, 3600,
             [&o](uint64_t v) { o.duration_s = double(v); });
    add_uint(app, "-w,--window", "transfers in flight (8)", 1, 256, [&o](uint64_t v) { o.window = unsigned(v); });
    add_uint(app, "--rounds", "rounds; the tests alternate within each (1)", 1, 100,
             [&o](uint64_t v) { o.rounds = unsigned(v); });
}

/// Arguments CLI11 did not take: an unknown option or a stray word.
void refuse_leftovers(const std::vector<std::string> &left)
{
    if (left.empty()) return;
    const std::string &arg = left.front();
    if (arg.size() > 1 && arg[0] == '-') throw ArgError("unknown option " + arg);
    throw ArgError("unexpected argument '" + arg + "'");
}

} // namespace

const char *to_string(TestKind kind) { return kind == TestKind::Latency ? "latency" : "throughput"; }
namespace {
const std::pair<RespTest, const char *> kRespTests[] = {{RespTest::Set, "SET"},
                                                        {RespTest::Get, "GET"},
                                                        {RespTest::Incr, "INCR"},
                                                        {RespTest::Lpush, "LPUSH"},
                                                        {RespTest::Mget, "MGET"}};
} // namespace

const char *to_string(RespTest test)
{
    for (const auto &t : kRespTests)
        if (t.first == test) return t.second;
    return "?";
}

std::optional<RespTest> resp_test_named(const std::string &name)
{
    for (const auto &t : kRespTests)
        if (lower(t.second) == lower(name)) return t.first;
    return std::nullopt;
}

std::string resp_test_names()
{
    std::string names;
    for (const auto &t : kRespTests) names += (names.empty() ? "" : ", ") + lower(t.second);
    return names;
}

size_t parse_size(const std::string &text, const std::string &option)
{
    const std::string expected = "expected a size of 1 byte to 64M, like 64, 4k, 64K, 1M";
    size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    if (digits == 0 || digits > 12) throw ArgError(option + ": '" + text + "' is not a size; " + expected);
    uint64_t n = std::strtoull(text.substr(0, digits).c_str(), nullptr, 10);
    std::string unit = lower(text.substr(digits));
    static const std::map<std::string, unsigned> shifts = {{"", 0},   {"b", 0},    {"k", 10}, {"kib", 10},
                                                           {"m", 20}, {"mib", 20}, {"g", 30}, {"gib", 30}};
    auto it = shifts.find(unit);
    if (it == shifts.end()) throw ArgError(option + ": '" + text + "' has an unknown unit; " + expected);
    uint64_t bytes = n << it->second;
    if (n == 0 || (bytes >> it->second) != n || bytes > kMaxMessage)
        throw ArgError(option + ": '" + text + "' is out of range; " + expected);
    return static_cast<size_t>(bytes);
}

std::vector<size_t> parse_size_list(const std::string &text, const std::string &option)
{
    std::vector<size_t> sizes;
    for (const std::string &item : split(text, ',')) {
        if (item.empty()) throw ArgError(option + ": empty item in '" + text + "'");
        sizes.push_back(parse_size(item, option));
    }
    return sizes;
}

Invocation parse_args(const std::vector<std::string> &args)
{
    Invocation inv;
    CLI::App app("twinwire-bench: latency, throughput and RESP load over any twinwire transport", "twinwire-bench");
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.set_version_flag("--version", std::string("twinwire-bench ") + TW_BENCH_VERSION);
    app.require_subcommand(0, 1);
    app.allow_extras(); // an unknown mode is named below, not as CLI11's "not expected" list
    app.footer(kFooter);
    const std::pair<Mode, CLI::App *> modes[] = {
        {Mode::Server, app.add_subcommand("server", "echo and sink server")},
        {Mode::Client, app.add_subcommand("client", "latency and throughput against a server")},
        {Mode::Local, app.add_subcommand("local", "server and client in one process")},
        {Mode::Resp, app.add_subcommand("resp", "Redis protocol load, like redis-benchmark")},
        {Mode::Rma, app.add_subcommand("rma", "one-sided remote memory against the stream, in one process")},
    };
    add_server(modes[0].second, inv.server);
    add_client(modes[1].second, inv.client);
    add_local(modes[2].second, inv.local);
    add_resp(modes[3].second, inv.resp);
    add_rma(modes[4].second, inv.rma);
    for (const auto &m : modes) m.second->allow_extras();
    inv.server.runtime.args = inv.client.runtime.args = inv.local.runtime.args = inv.resp.runtime.args =
        inv.rma.runtime.args = args;

    // Every error names the mode it concerns: the one CLI11 entered, else the first word.
    const auto named = [&app, &args](const ArgError &e) {
        const auto entered = app.get_subcommands();
        return ArgError((entered.empty() ? args.front() : entered.front()->get_name()) + ": " + e.what());
    };
    try {
        app.parse(std::vector<std::string>(args.rbegin(), args.rend())); // CLI11 takes them last first
    } catch (const CLI::CallForHelp &) {
        inv.mode = Mode::Help;
        inv.text = app.help(); // the named mode's help when there is one
        return inv;
    } catch (const CLI::CallForVersion &e) {
        inv.mode = Mode::Help;
        inv.text = std::string(e.what()) + "\n";
        return inv;
    } catch (const CLI::ParseError &e) {
        throw named(ArgError(e.what()));
    } catch (const ArgError &e) {
        throw named(e);
    }
    const auto chosen =
        std::find_if(std::begin(modes), std::end(modes), [](const auto &m) { return m.second->parsed(); });
    if (chosen == std::end(modes)) {
        if (args.empty()) throw ArgError("no mode given; expected server, client, local, resp or rma");
        throw ArgError("unknown mode '" + args.front() + "'; expected server, client, local, resp or rma");
    }
    inv.mode = chosen->first;
    try {
        refuse_leftovers(app.remaining()); // options before the mode
        refuse_leftovers(chosen->second->remaining());
        switch (inv.mode) {
        case Mode::Client:
            finish_sweep(inv.client.sweep);
            break;
        case Mode::Local:
            finish_sweep(inv.local.sweep);
            break;
        case Mode::Resp:
            refuse_json_and_csv(inv.resp.json, inv.resp.csv);
            break;
        default:
            break;
        }
    } catch (const ArgError &e) {
        throw named(e);
    }
    return inv;
}

} // namespace twinwire::bench
