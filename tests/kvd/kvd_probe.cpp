// SPDX-License-Identifier: MIT
// kvd-probe: a minimal RESP client on the twinwire runtime, so the daemon's
// integration cases run over any transport (redis-cli speaks TCP only).
//
//   kvd-probe --port P [--host H] [--transport auto|tcp|NAME[,NAME...]] [--source ADDR]
//             [--timeout-ms N] [--linger-ms N] [--show-transport] CMD [ARG...]
//   kvd-probe ... --stdin [--replies N] [--half-close]
//   kvd-probe ... --repeat N [--pace-ms M] [--hold-reading-ms T] [--quiet] CMD [ARG...]
//
// Prints each reply as redis-cli does when its output is not a terminal.
// With --stdin it sends standard input as it is (inline, pipelined or
// malformed requests) and prints replies until N arrived or the server
// closed; --half-close sends end-of-stream right after it, as nc -N does.
// --repeat sends the command N times (one every M ms with
// --pace-ms) and --hold-reading-ms reads nothing for T ms: a slow reader.
// --quiet prints only "replies: N".  Exit status: 0 when the expected
// replies arrived, 1 otherwise.
#include "bench/resp_reply.hpp"
#include "client_tool.hpp"

#include <twinwire/log.hpp>
#include <twinwire/runtime.hpp>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace resp = twinwire::bench::resp;

// A reply as redis-cli prints it when its output is not a terminal.
std::string cli_text(const resp::Value &v)
{
    switch (v.type) {
    case resp::Type::Status:
    case resp::Type::Error:
    case resp::Type::Bulk:
        return v.text;
    case resp::Type::Integer:
        return std::to_string(v.integer);
    case resp::Type::NullBulk:
    case resp::Type::NullArray:
        return "";
    case resp::Type::Array: {
        std::string s;
        for (size_t i = 0; i < v.elements.size(); ++i) s += (i ? "\n" : "") + cli_text(v.elements[i]);
        return s;
    }
    }
    return "";
}

struct Options {
    std::string host = "127.0.0.1";
    int port = -1;
    std::string transport = "auto";
    std::string source;
    uint32_t timeout_ms = 10000;
    uint32_t linger_ms = 0;
    bool show_transport = false;
    bool from_stdin = false;
    bool half_close = false;
    long repeat = 1;
    uint32_t pace_ms = 0;
    uint32_t hold_reading_ms = 0;
    bool quiet = false;
    long replies = -1; ///< -1: one per command, or until close with --stdin
    std::vector<std::string> command;
};

[[noreturn]] void usage(const std::string &why) { kvdtool::usage("kvd-probe", why); }

Options parse(int argc, char **argv)
{
    Options o;
    kvdtool::Args args("kvd-probe", argc, argv);
    auto value = [&] { return args.value(); };
    std::string a;
    while (args.next(&a)) {
        if (!o.command.empty()) o.command.push_back(a);
        else if (a == "--host") o.host = value();
        else if (a == "--port") o.port = std::stoi(value());
        else if (a == "--transport") o.transport = value();
        else if (a == "--source") o.source = value();
        else if (a == "--timeout-ms") o.timeout_ms = static_cast<uint32_t>(std::stoul(value()));
        else if (a == "--linger-ms") o.linger_ms = static_cast<uint32_t>(std::stoul(value()));
        else if (a == "--replies") o.replies = std::stol(value());
        else if (a == "--repeat") o.repeat = std::stol(value());
        else if (a == "--pace-ms") o.pace_ms = static_cast<uint32_t>(std::stoul(value()));
        else if (a == "--hold-reading-ms") o.hold_reading_ms = static_cast<uint32_t>(std::stoul(value()));
        else if (a == "--quiet") o.quiet = true;
        else if (a == "--show-transport") o.show_transport = true;
        else if (a == "--stdin") o.from_stdin = true;
        else if (a == "--half-close") o.half_close = true;
        else if (a.compare(0, 2, "--") == 0) usage("unknown option " + a);
        else o.command.push_back(a);
    }
    if (o.port < 0) usage("--port is required");
    if (o.from_stdin == !o.command.empty()) usage("give a command or --stdin");
    return o;
}

std::string encode(const std::vector<std::string> &words)
{
    std::string out = "*" + std::to_string(words.size()) + "\r\n";
    for (const auto &w : words) out += "$" + std::to_string(w.size()) + "\r\n" + w + "\r\n";
    return out;
}

} // namespace

int main(int argc, char **argv)
{
    Options o = parse(argc, argv);
    std::string request;
    if (o.from_stdin) {
        std::ostringstream all;
        all << std::cin.rdbuf();
        request = all.str();
    } else {
        request = encode(o.command);
        if (o.replies < 0) o.replies = o.repeat;
    }

    auto runtime = kvdtool::start_runtime("kvd-probe", o.transport, "warn");
    if (!runtime) return 1;
    twinwire::Runtime &rt = *runtime;

    int status = 1;
    long seen = 0;
    std::string received;
    twinwire::ConnectionPtr conn;
    bool finished = false;
    auto done = [&](int st) { // the first outcome counts; closing may report again
        if (finished) return;
        finished = true;
        status = st;
        rt.stop(true);
    };
    twinwire::Timer deadline(rt.loop(0), [&] {
        std::fprintf(stderr, "kvd-probe: no complete answer within %u ms (%ld replies)\n", o.timeout_ms, seen);
        done(1);
    });
    deadline.start(std::chrono::milliseconds(o.timeout_ms));
    std::unique_ptr<twinwire::Timer> linger, pacer, hold;
    long sent = 0;

    twinwire::ConnectOptions co(o.host, static_cast<uint16_t>(o.port));
    co.source_address = o.source;
    co.loop = 0;
    rt.connect(co, [&](const twinwire::ConnectionPtr &c, const std::string &error) {
        if (!c) {
            std::fprintf(stderr, "kvd-probe: cannot connect to %s:%d: %s\n", o.host.c_str(), o.port, error.c_str());
            return done(1);
        }
        conn = c;
        if (o.show_transport)
            std::fprintf(stderr, "transport: %s%s%s\n", c->transport_name().c_str(),
                         c->fallback_reason().empty() ? "" : "; fallback: ", c->fallback_reason().c_str());
        c->on_data([&](twinwire::Connection &cn, twinwire::Buffer &in) {
            received += in.take(in.size());
            for (;;) {
                resp::Value v;
                resp::Reply reply = resp::parse_reply(received, v);
                if (reply.outcome == resp::Reply::Outcome::Incomplete) break;
                if (reply.outcome == resp::Reply::Outcome::Malformed) {
                    std::fprintf(stderr, "kvd-probe: malformed reply: %s\n", received.c_str());
                    return done(1);
                }
                received.erase(0, reply.length);
                if (!o.quiet) std::printf("%s\n", cli_text(v).c_str());
                if (++seen == o.replies) {
                    std::fflush(stdout);
                    if (o.linger_ms == 0) return done(0);
                    linger = std::make_unique<twinwire::Timer>(cn.loop(), [&] { done(0); });
                    linger->start(std::chrono::milliseconds(o.linger_ms));
                }
            }
        });
        c->on_close([&](twinwire::Connection &, const twinwire::CloseInfo &info) {
            if (o.replies < 0) return done(received.empty() ? 0 : 1);
            if (seen < o.replies) {
                std::fprintf(stderr, "kvd-probe: connection closed after %ld of %ld replies: %s\n", seen, o.replies,
                             info.reason.c_str());
                done(1);
            }
        });
        if (o.hold_reading_ms > 0) {
            c->pause_reading();
            hold = std::make_unique<twinwire::Timer>(c->loop(), [&] { conn->resume_reading(); });
            hold->start(std::chrono::milliseconds(o.hold_reading_ms));
        }
        if (o.pace_ms == 0) {
            for (long i = 0; i < o.repeat; ++i)
                if (!c->write(request)) return done(1);
            if (o.half_close) c->shutdown_write();
            return;
        }
        pacer = std::make_unique<twinwire::Timer>(c->loop(), [&] {
            if (sent >= o.repeat) return pacer->stop();
            ++sent;
            if (!conn->write(request)) done(1);
        });
        pacer->start(std::chrono::milliseconds(0), std::chrono::milliseconds(o.pace_ms));
    });
    rt.run();
    if (o.quiet) std::printf("replies: %ld\n", seen);
    std::fflush(stdout);
    return status;
}
