// SPDX-License-Identifier: MIT
#include "bench_server.hpp"

#include "lent_write.hpp"
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
    std::fprintf(stderr, "twinwire-bench server: connection from %s: %s; closing it\n", conn.peer_address().c_str(),
                 why.c_str());
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

// --zero-copy: echo from the borrowed receive buffer into lent send buffers
// (one copy in all).  Returns the bytes echoed; the rest is read again.
size_t echo_in_place(Connection &conn, const char *data, size_t len)
{
    bool would_block = false;
    size_t sent = write_through_lent(conn, data, len, &would_block);
    if (would_block) {
        conn.pause_reading(); // on_drain resumes
        return sent;
    }
    if (sent < len && !conn.write(data + sent, len - sent)) return len; // closed: close follows
    if (conn.output_queued() > kEchoBacklog) conn.pause_reading();
    return len;
}

void start_round(Connection &conn, ServerState &s, const unsigned char header[wire::kCountSize])
{
    s.round_left = wire::decode_count(header);
    if (s.round_left != 0) return;
    unsigned char ack[wire::kCountSize];
    wire::encode_count(s.received, ack);
    s.ended = true;
    conn.write(ack, sizeof ack);
}

size_t take_payload(ServerState &s, size_t available)
{
    size_t take = static_cast<size_t>(std::min<uint64_t>(s.round_left, available));
    s.round_left -= take;
    s.received += take;
    return take;
}

void sink(Connection &conn, Buffer &in, ServerState &s)
{
    while (!in.empty() && !s.ended) {
        if (s.round_left == 0) {
            if (in.size() < wire::kCountSize) return;
            unsigned char header[wire::kCountSize];
            in.peek(header, sizeof header);
            in.drain(sizeof header);
            start_round(conn, s, header);
            continue;
        }
        in.drain(take_payload(s, in.size()));
    }
    if (s.ended && !in.empty()) refuse(conn, "bytes after the end of the sink stream");
}

// --zero-copy: count the payload where it lies; a round header split across
// two buffers is left for sink() (copied).
size_t sink_in_place(Connection &conn, const char *data, size_t len, ServerState &s)
{
    size_t used = 0;
    while (used < len && !s.ended) {
        if (s.round_left == 0) {
            if (len - used < wire::kCountSize) return used;
            start_round(conn, s, reinterpret_cast<const unsigned char *>(data + used));
            used += wire::kCountSize;
            continue;
        }
        used += take_payload(s, len - used);
    }
    if (s.ended && used < len) refuse(conn, "bytes after the end of the sink stream");
    return len;
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
            if (state->hello.zero_copy) // the bytes after the hello already read go through on_data
                c.on_borrowed_data([state](Connection &conn, const char *data, size_t len) {
                    if (state->hello.test == wire::Test::Echo) return echo_in_place(conn, data, len);
                    return sink_in_place(conn, data, len, *state);
                });
        }
        if (state->hello.test == wire::Test::Echo) echo(c, in);
        else sink(c, in, *state);
    });
    conn->on_drain([](Connection &c) { c.resume_reading(); });
}

} // namespace twinwire::bench
