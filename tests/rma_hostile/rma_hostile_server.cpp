// SPDX-License-Identifier: MIT
// The server the hostile RMA peer (hostile_peer.py) talks to: twinwire over
// tcp with RMA enabled on every connection, the host's emulation in the path.
//
//   rma-hostile-server [KEY=VALUE...]     (configuration keys, e.g. write_buffer_limit=1M)
//
// Prints "port N" once listening, then one line per event, flushed:
//   "accept ID ADDRESS:PORT"       a connection from the peer's address
//   "line ID TEXT"                 a line the application read (read_until, 256 bytes at most)
//   "eof ID"                       the peer ended its stream (closed on the next loop turn)
//   "close ID|ERROR|CODE|REASON"   on_close: CloseInfo's error, code (its message) and reason
// Each connection exposes two regions of 4096 bytes, byte i of each
// (i * 7 + k) & 0xff (k = 0: read-write, id 1; k = 1: read-only, id 2), and
// sends "D HEX_RW HEX_RO\n" (the descriptors) first.  Lines it answers:
// "PING" -> "PONG", "GET REGION OFFSET LEN" -> the bytes in hex.
#include <twinwire/runtime.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace {

using namespace twinwire;

constexpr size_t kRegion = 4096;
constexpr size_t kMaxLine = 256;

void say(const std::string &line)
{
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

std::string hex(const char *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < n; ++i) {
        out += digits[(p[i] >> 4) & 0xf];
        out += digits[p[i] & 0xf];
    }
    return out;
}

/// What one connection holds; freed with the connection's handlers.
struct Session {
    char regions[2][kRegion];
    RmaExposurePtr exposures[2];
};

void serve_lines(const ConnectionPtr &c, const std::shared_ptr<Session> &s)
{
    c->read_until("\n", kMaxLine, [s](Connection &conn, std::string line) {
        line.pop_back();
        say("line " + std::to_string(conn.id()) + " " + line);
        unsigned region = 0;
        unsigned long long offset = 0, len = 0;
        if (line == "PING") {
            conn.write("PONG\n");
        } else if (std::sscanf(line.c_str(), "GET %u %llu %llu", &region, &offset, &len) == 3 && region < 2 &&
                   offset <= kRegion && len <= kRegion - offset) {
            conn.write(hex(s->regions[region] + offset, len) + "\n");
        } else {
            conn.write("?\n");
        }
        if (conn.is_open()) serve_lines(conn.shared_from_this(), s);
    });
}

void serve(const ConnectionPtr &c)
{
    say("accept " + std::to_string(c->id()) + " " + c->peer_address());
    std::string why;
    if (!c->enable_rma(&why)) return say("error enable_rma: " + why), c->abort();
    auto s = std::make_shared<Session>();
    std::string line = "D";
    for (int k = 0; k < 2; ++k) {
        for (size_t i = 0; i < kRegion; ++i) s->regions[k][i] = static_cast<char>((i * 7 + k) & 0xff);
        s->exposures[k] = c->expose(s->regions[k], kRegion, k ? RmaAccess::read : RmaAccess::read_write, &why);
        if (!s->exposures[k]) return say("error expose: " + why), c->abort();
        line += " " + hex(s->exposures[k]->descriptor().data(), s->exposures[k]->descriptor().size());
    }
    c->write(line + "\n");
    // The close waits for the next loop turn: what the peer sent behind its
    // end in the same read (a data frame: a protocol error) ends the
    // connection first, with its own reason.
    c->on_eof([](Connection &conn) {
        say("eof " + std::to_string(conn.id()));
        std::weak_ptr<Connection> weak = conn.shared_from_this();
        conn.loop().post([weak] {
            if (auto c = weak.lock()) c->close();
        });
    });
    // The session lives as long as the handlers: the close drops them.
    c->on_close([s](Connection &conn, const CloseInfo &info) {
        say("close " + std::to_string(conn.id()) + "|" + std::to_string(info.error) + "|" + info.code.message() + "|" +
            info.reason);
    });
    serve_lines(c, s);
}

} // namespace

int main(int argc, char **argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    Config config;
    config.set("transport", "tcp");
    config.set("log_level", "warn");
    config.set("listen_address", "127.0.0.1");
    config.set("listen_port", "0");
    try {
        for (int i = 1; i < argc; ++i) {
            const char *eq = std::strchr(argv[i], '=');
            if (!eq) throw std::runtime_error(std::string("not KEY=VALUE: ") + argv[i]);
            config.set(std::string(argv[i], static_cast<size_t>(eq - argv[i])), eq + 1, "command line");
        }
        Runtime rt(config);
        rt.start();
        auto listener = rt.listen(ListenOptions{}, serve);
        say("port " + std::to_string(listener->port()));
        rt.stop_on_signals({SIGTERM, SIGINT});
        rt.run();
    } catch (const std::exception &e) {
        say(std::string("error ") + e.what());
        return 1;
    }
    return 0;
}
