// SPDX-License-Identifier: MIT
#include "bench_server.hpp"

#include "wire.hpp"

#include <cstdio>
#include <memory>

namespace twinwire::bench {
namespace {

// An echo whose peer does not read stops reading beyond this much queued output.
constexpr size_t kEchoBacklog = size_t(8) << 20;

struct ServerState {
    bool have_hello = false;
    wire::Hello hello;
    uint64_t round_left = 0; // sink: payload bytes still due in this round
    uint64_t received = 0;   // sink: payload bytes so far
    bool ended = false;      // sink: end marker seen and acknowledged
};

void refuse(Connection &conn, const std::string &why)
{
    std::fprintf(stderr, "twinwire-bench server: connection from %s: %s; closing it\n",
                 conn.peer_address().c_str(), why.c_str());
    conn.abort();
}

// Writes chunk by chunk: with nothing queued, each write goes straight to the
// transport, without copying into the connection's output buffer.
void echo(Connection &conn, Buffer &in)
{
    while (!in.empty()) {
        std::string_view chunk = in.first_chunk();
        if (!conn.write(chunk.data(), chunk.size())) return; // closed or over the limit: close follows
        in.drain(chunk.size());
    }
    if (conn.output_queued() > kEchoBacklog) conn.pause_reading();
}

void sink(Connection &conn, Buffer &in, ServerState &s)
{
    while (!in.empty() && !s.ended) {
        if (s.round_left == 0) {
            if (in.size() < wire::kCountSize) return;
            unsigned char header[wire::kCountSize];
            in.peek(header, sizeof header);
            in.drain(sizeof header);
            s.round_left = wire::decode_count(header);
            if (s.round_left == 0) {
                unsigned char ack[wire::kCountSize];
                wire::encode_count(s.received, ack);
                s.ended = true;
                conn.write(ack, sizeof ack);
            }
            continue;
        }
        size_t take = static_cast<size_t>(std::min<uint64_t>(s.round_left, in.size()));
        in.drain(take);
        s.round_left -= take;
        s.received += take;
    }
    if (s.ended && !in.empty()) refuse(conn, "bytes after the end of the sink stream");
}

} // namespace

void serve_bench_connection(const ConnectionPtr &conn)
{
    auto state = std::make_shared<ServerState>();
    conn->on_data([state](Connection &c, Buffer &in) {
        if (!state->have_hello) {
            if (in.size() < wire::kHelloSize) return;
            unsigned char bytes[wire::kHelloSize];
            in.peek(bytes, sizeof bytes);
            in.drain(sizeof bytes);
            std::string why = wire::decode_hello(bytes, &state->hello);
            if (!why.empty()) {
                refuse(c, "bad hello: " + why);
                return;
            }
            state->have_hello = true;
        }
        if (state->hello.test == wire::Test::Echo) echo(c, in);
        else sink(c, in, *state);
    });
    conn->on_drain([](Connection &c) { c.resume_reading(); });
}

} // namespace twinwire::bench
