// SPDX-License-Identifier: MIT
// The bench protocol between client and server.
//
// Each connection starts with a 16-byte hello: "TWB1", version 1, the test
// (1 = echo, 2 = sink), flags (bit 0: serve this connection zero-copy, from
// borrowed receive buffers into lent send buffers), 1 zero byte, the message
// size (u32 LE), 4 zero bytes.
//  - echo: the server sends every byte back.
//  - sink: the client sends rounds, each an 8-byte length (u64 LE) and that
//    many bytes; a round of length 0 ends the stream and the server answers
//    with the number of payload bytes it received (u64 LE).  Rounds let the
//    client decide when to stop (--duration) without the server parsing
//    every message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace twinwire::bench::wire {

constexpr size_t kHelloSize = 16;
constexpr size_t kCountSize = 8;
constexpr uint8_t kVersion = 1;

enum class Test : uint8_t { Echo = 1, Sink = 2 };

struct Hello {
    Test test = Test::Echo;
    uint32_t message_size = 0;
    bool zero_copy = false; ///< the server reads and writes in place too
};

void encode_hello(const Hello &hello, unsigned char out[kHelloSize]);
/// Returns "" and fills *out, or why the bytes are not a hello.
std::string decode_hello(const unsigned char in[kHelloSize], Hello *out);

void encode_count(uint64_t value, unsigned char out[kCountSize]);
uint64_t decode_count(const unsigned char in[kCountSize]);

} // namespace twinwire::bench::wire
