// SPDX-License-Identifier: MIT
#include "wire.hpp"

#include <cstring>

namespace twinwire::bench::wire {
namespace {

constexpr unsigned char kMagic[4] = {'T', 'W', 'B', '1'};
constexpr unsigned char kFlagZeroCopy = 1;

void put_le(unsigned char *out, uint64_t v, size_t bytes)
{
    for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
}

uint64_t get_le(const unsigned char *in, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v |= uint64_t(in[i]) << (8 * i);
    return v;
}

} // namespace

void encode_hello(const Hello &hello, unsigned char out[kHelloSize])
{
    std::memset(out, 0, kHelloSize);
    std::memcpy(out, kMagic, sizeof kMagic);
    out[4] = kVersion;
    out[5] = static_cast<unsigned char>(hello.test);
    out[6] = hello.zero_copy ? kFlagZeroCopy : 0;
    put_le(out + 8, hello.message_size, 4);
}

std::string decode_hello(const unsigned char in[kHelloSize], Hello *out)
{
    if (std::memcmp(in, kMagic, sizeof kMagic) != 0) return "not a twinwire-bench client (bad magic)";
    if (in[4] != kVersion) return "bench protocol version " + std::to_string(in[4]) + ", expected 1";
    if (in[5] != uint8_t(Test::Echo) && in[5] != uint8_t(Test::Sink)) return "unknown test " + std::to_string(in[5]);
    if (in[6] & ~kFlagZeroCopy) return "unknown flags " + std::to_string(in[6]);
    out->test = static_cast<Test>(in[5]);
    out->zero_copy = (in[6] & kFlagZeroCopy) != 0;
    out->message_size = static_cast<uint32_t>(get_le(in + 8, 4));
    if (out->message_size == 0) return "message size 0";
    return {};
}

void encode_count(uint64_t value, unsigned char out[kCountSize]) { put_le(out, value, kCountSize); }
uint64_t decode_count(const unsigned char in[kCountSize]) { return get_le(in, kCountSize); }

} // namespace twinwire::bench::wire
