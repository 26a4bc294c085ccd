// SPDX-License-Identifier: MIT
#include "args.hpp"

#include <twinwire/config.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
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
    const std::string expected =
        "expected an integer " + std::to_string(min) + ".." + std::to_string(max);
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

// Walks "--name value" and "--name=value" pairs.
class Reader {
public:
    Reader(const std::vector<std::string> &args, size_t first) : args_(args), pos_(first) {}

    bool next()
    {
        if (pos_ >= args_.size()) return false;
        const std::string &arg = args_[pos_++];
        const bool is_short = arg.size() == 2 && arg[0] == '-' && arg[1] != '-';
        if (!is_short && (arg.size() < 3 || arg.compare(0, 2, "--") != 0))
            throw ArgError("unexpected argument '" + arg + "'; options start with -- (or - for the short ones)");
        size_t eq = is_short ? std::string::npos : arg.find('=');
        name_ = arg.substr(0, eq);
        inline_value_.reset();
        if (eq != std::string::npos) inline_value_ = arg.substr(eq + 1);
        return true;
    }
    const std::string &name() const { return name_; }
    bool has_inline_value() const { return inline_value_.has_value(); }
    std::string value()
    {
        if (inline_value_) return *inline_value_;
        if (pos_ >= args_.size()) throw ArgError(name_ + " needs a value");
        return args_[pos_++];
    }

private:
    const std::vector<std::string> &args_;
    size_t pos_;
    std::string name_;
    std::optional<std::string> inline_value_;
};

using Handler = std::function<void(Reader &)>;
using Table = std::map<std::string, Handler>;

/// Short options as perftest, sockperf and redis-benchmark users type them;
/// each mode lists its own, so a letter means what those tools mean by it
/// (-d: the device for client/local/server as in perftest, the data size for
/// resp as in redis-benchmark).
void add_short(Table &t, std::initializer_list<std::pair<const char *, const char *>> pairs)
{
    for (const auto &p : pairs) t[p.first] = t.at(p.second);
}

// Runs the handler of each option; flags (no value) refuse "--flag=x".
void run_table(Reader &r, const Table &table, const std::string &mode, bool *help)
{
    while (r.next()) {
        if (r.name() == "--help") {
            *help = true;
            continue;
        }
        auto it = table.find(r.name());
        if (it == table.end()) throw ArgError(mode + ": unknown option " + r.name());
        it->second(r);
    }
}

Handler flag(bool *out)
{
    return [out](Reader &r) {
        if (r.has_inline_value()) throw ArgError(r.name() + " takes no value");
        *out = true;
    };
}

void add_runtime(Table &t, RuntimeOptions &o)
{
    t["--config"] = [&o](Reader &r) {
        o.config_file = r.value();
        if (o.config_file.empty()) throw ArgError("--config: empty file name");
    };
    t["--transport"] = [&o](Reader &r) {
        std::string v = lower(r.value());
        try {
            twinwire::parse_transport_list(v);
        } catch (const twinwire::ConfigError &e) {
            throw ArgError("--transport: '" + v + "': " + e.what());
        }
        o.transport = v;
    };
    t["--threads"] = [&o](Reader &r) { o.threads = static_cast<unsigned>(parse_uint(r.value(), "--threads", 1, 256)); };
    t["--device"] = [&o](Reader &r) {
        o.device = r.value();
        if (o.device->empty()) throw ArgError("--device: empty device name");
    };
    t["--gid-index"] = [&o](Reader &r) {
        o.gid_index = static_cast<unsigned>(parse_uint(r.value(), "--gid-index", 0, 65535));
    };
}

void add_target(Table &t, TargetOptions &o)
{
    t["--host"] = [&o](Reader &r) {
        o.host = r.value();
        if (o.host.empty()) throw ArgError("--host: empty address");
    };
    t["--port"] = [&o](Reader &r) { o.port = static_cast<uint16_t>(parse_uint(r.value(), "--port", 1, 65535)); };
    t["--source"] = [&o](Reader &r) { o.source = r.value(); };
}

void add_stall(Table &t, unsigned *stall)
{
    t["--stall-timeout"] = [stall](Reader &r) {
        *stall = static_cast<unsigned>(parse_uint(r.value(), "--stall-timeout", 1, 3600));
    };
}

void add_sweep(Table &t, SweepOptions &o)
{
    t["--connections"] = [&o](Reader &r) {
        o.connections = static_cast<unsigned>(parse_uint(r.value(), "--connections", 1, 10000));
    };
    t["--duration"] = [&o](Reader &r) { o.duration_s = parse_seconds(r.value(), "--duration"); };
    t["--iterations"] = [&o](Reader &r) { o.iterations = parse_uint(r.value(), "--iterations", 1, 1000000000000ull); };
    t["--sizes"] = [&o](Reader &r) { o.sizes = parse_size_list(r.value(), "--sizes"); };
    t["--test"] = [&o](Reader &r) {
        std::string v = lower(r.value());
        if (v == "latency") o.tests = {TestKind::Latency};
        else if (v == "throughput") o.tests = {TestKind::Throughput};
        else if (v == "both") o.tests = {TestKind::Latency, TestKind::Throughput};
        else throw ArgError("--test: '" + v + "' is not a test; expected latency, throughput or both");
    };
    t["--json"] = flag(&o.json);
    t["--csv"] = flag(&o.csv);
    add_stall(t, &o.stall_timeout_s);
    add_short(t, {{"-s", "--sizes"}, {"-n", "--iterations"}, {"-D", "--duration"}, {"-c", "--connections"},
                  {"-t", "--test"}, {"-d", "--device"}, {"-x", "--gid-index"}});
}

void refuse_json_and_csv(bool json, bool csv, const std::string &mode)
{
    if (json && csv) throw ArgError(mode + ": give --json or --csv, not both");
}

void finish_sweep(SweepOptions &o, const std::string &mode)
{
    refuse_json_and_csv(o.json, o.csv, mode);
    if (o.duration_s && o.iterations) throw ArgError(mode + ": give --duration or --iterations, not both");
    if (o.sizes.empty()) o.sizes = {64, 4096, 65536, size_t(1) << 20};
    if (o.tests.empty()) o.tests = {TestKind::Latency, TestKind::Throughput};
}

void require_target(const TargetOptions &t, const std::string &mode)
{
    if (t.host.empty()) throw ArgError(mode + ": --host is required");
    if (t.port == 0) throw ArgError(mode + ": --port is required");
}

Mode parse_mode(const std::string &word)
{
    if (word == "server") return Mode::Server;
    if (word == "client") return Mode::Client;
    if (word == "local") return Mode::Local;
    if (word == "resp") return Mode::Resp;
    if (word == "--help" || word == "-h" || word == "help") return Mode::Help;
    throw ArgError("unknown mode '" + word + "'; expected server, client, local or resp");
}

} // namespace

const char *to_string(TestKind kind) { return kind == TestKind::Latency ? "latency" : "throughput"; }
namespace {
const std::pair<RespTest, const char *> kRespTests[] = {
    {RespTest::Set, "SET"}, {RespTest::Get, "GET"}, {RespTest::Incr, "INCR"}, {RespTest::Lpush, "LPUSH"},
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
    static const std::map<std::string, unsigned> shifts = {
        {"", 0}, {"b", 0}, {"k", 10}, {"kib", 10}, {"m", 20}, {"mib", 20}, {"g", 30}, {"gib", 30}};
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
    if (args.empty()) throw ArgError("no mode given; expected server, client, local or resp");
    inv.mode = parse_mode(args[0]);
    if (inv.mode == Mode::Help) return inv;

    Reader reader(args, 1);
    Table table;
    bool help = false;
    const std::string mode = args[0];
    inv.server.runtime.args = inv.client.runtime.args = inv.local.runtime.args = inv.resp.runtime.args = args;
    switch (inv.mode) {
    case Mode::Server: {
        ServerOptions &o = inv.server;
        add_runtime(table, o.runtime);
        table["--listen"] = [&o](Reader &r) {
            o.listen = r.value();
            if (o.listen.empty()) throw ArgError("--listen: empty address");
        };
        table["--port"] = [&o](Reader &r) { o.port = static_cast<int>(parse_uint(r.value(), "--port", 0, 65535)); };
        add_short(table, {{"-p", "--port"}, {"-d", "--device"}, {"-x", "--gid-index"}});
        run_table(reader, table, mode, &help);
        break;
    }
    case Mode::Client: {
        ClientOptions &o = inv.client;
        add_runtime(table, o.runtime);
        add_target(table, o.target);
        add_sweep(table, o.sweep);
        add_short(table, {{"-p", "--port"}});
        run_table(reader, table, mode, &help);
        if (!help) {
            require_target(o.target, mode);
            finish_sweep(o.sweep, mode);
        }
        break;
    }
    case Mode::Local: {
        LocalOptions &o = inv.local;
        add_runtime(table, o.runtime);
        add_sweep(table, o.sweep);
        table["--listen"] = [&o](Reader &r) {
            o.listen = r.value();
            if (o.listen.empty()) throw ArgError("--listen: empty address");
        };
        table["--source"] = [&o](Reader &r) { o.source = r.value(); };
        run_table(reader, table, mode, &help);
        if (!help) finish_sweep(o.sweep, mode);
        break;
    }
    case Mode::Resp: {
        RespOptions &o = inv.resp;
        o.target.host = "127.0.0.1";
        o.target.port = 6379;
        add_runtime(table, o.runtime);
        add_target(table, o.target);
        table["--clients"] = [&o](Reader &r) {
            o.clients = static_cast<unsigned>(parse_uint(r.value(), "--clients", 1, 10000));
        };
        table["--requests"] = [&o](Reader &r) { o.requests = parse_uint(r.value(), "--requests", 1, 1000000000000ull); };
        table["--pipeline"] = [&o](Reader &r) {
            o.pipeline = static_cast<unsigned>(parse_uint(r.value(), "--pipeline", 1, 100000));
        };
        table["--data-size"] = [&o](Reader &r) {
            o.data_size = static_cast<size_t>(parse_uint(r.value(), "--data-size", 0, 64u << 20));
        };
        table["--keyspace"] = [&o](Reader &r) { o.keyspace = parse_uint(r.value(), "--keyspace", 1, 1000000000000ull); };
        table["--tests"] = [&o](Reader &r) {
            std::string v = r.value();
            o.tests.clear();
            for (const std::string &item : split(lower(v), ',')) {
                auto test = resp_test_named(item);
                if (!test) throw ArgError("--tests: '" + item + "' is not a test; expected a list of " + resp_test_names());
                o.tests.push_back(*test);
            }
        };
        table["--json"] = flag(&o.json);
        table["--csv"] = flag(&o.csv);
        add_stall(table, &o.stall_timeout_s);
        // As redis-benchmark: -c clients, -n requests, -P pipeline, -d data size, -r keyspace, -t tests.
        add_short(table, {{"-c", "--clients"}, {"-n", "--requests"}, {"-P", "--pipeline"}, {"-d", "--data-size"},
                          {"-r", "--keyspace"}, {"-t", "--tests"}, {"-p", "--port"}, {"-x", "--gid-index"}});
        run_table(reader, table, mode, &help);
        if (!help) refuse_json_and_csv(o.json, o.csv, mode);
        break;
    }
    case Mode::Help: break;
    }
    if (help) inv.mode = Mode::Help;
    return inv;
}

const char *usage()
{
    return R"(twinwire-bench: latency, throughput and RESP load over any twinwire transport

Usage:
  twinwire-bench server [--config FILE] [--listen ADDR] [-p|--port N] [--transport auto|tcp|NAME[,NAME...]]
                        [--threads N] [-d|--device DEV] [-x|--gid-index N]
      Echo (latency) and sink (throughput) server; each connection says which
      it wants.  Prints "listening on ADDR:PORT" on stdout; stops on SIGINT/SIGTERM.

  twinwire-bench client --host H -p|--port P [--transport auto|tcp|NAME[,NAME...]] [--source ADDR]
                        [-c|--connections N] [-D|--duration S | -n|--iterations N]
                        [-s|--sizes 64,4k,64k,1M] [-t|--test latency|throughput|both] [--json | --csv]
                        [-d|--device DEV] [-x|--gid-index N]
                        [--threads N] [--config FILE] [--stall-timeout S]
      Latency: ping-pong of one message per connection; mean/p50/p99/p99.9 of
      every round trip (rt, us) and one way (ow = rt / 2, what perftest and
      sockperf report).  Throughput: one direction, the server acknowledges
      the bytes it received at the end; MB/s (MB = 2^20 bytes, as perftest
      counts), Gb/s (10^9 bits, as link rates count) and messages/s.
      --duration is per test and size (default 3 s); --iterations is round
      trips / messages per connection.  --device and --gid-index set
      rdma.device and rdma.gid_index (perftest's -d and -x).

  twinwire-bench local [--listen ADDR] [--source ADDR] [same options as client]
      Server and client in one process (default address 127.0.0.1).

  twinwire-bench resp [--host H] [-p|--port P] [--transport auto|tcp|NAME[,NAME...]] [--source ADDR]
                      [-c|--clients 50] [-n|--requests 100000] [-P|--pipeline 1] [-d|--data-size 3]
                      [-r|--keyspace 100000] [-t|--tests set,get,incr,lpush,mget] [--json | --csv]
                      [--device DEV] [-x|--gid-index N] [--threads N] [--config FILE] [--stall-timeout S]
      Redis protocol load (like redis-benchmark, whose short options these
      are): SET and GET key:<random>, INCR counter:<random>, LPUSH mylist,
      MGET of 10 keys, over RESP2; strict reply checks; requests/s and
      p50/p99/p99.9 latency (ms).  Default tests set,get; default target
      127.0.0.1:6379.  Exits 1 when any reply was an error.

Live progress goes to stderr once a second; the result table (or, with
--json, one JSON document with the version, time, host, command line and
every configuration key; with --csv, a header and one line per result) to
stdout.  The first 10 round trips of each latency test warm up and are not
counted.  A test that makes no progress for --stall-timeout seconds (default
30) is aborted and reported as failed.
Configuration: --config FILE, then TWINWIRE_* environment variables, then
the options above (the last one wins).

Exit status: 0 success; 1 a test failed or errors were counted; 2 bad arguments.
)";
}

} // namespace twinwire::bench
