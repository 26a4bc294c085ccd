// SPDX-License-Identifier: MIT
// The emulated RMA wire (docs/rma.md "The emulation's framing"): on a
// transport without TW_CAP_RMA, a connection that enabled RMA on both ends
// carries frames, each a 16-byte little-endian header and a payload, and the
// descriptors the emulation hands out.  Encoding and decoding only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace twinwire::rma {

constexpr uint32_t kMagic = 0x414d5254; ///< "TRMA", little-endian
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 16;
/// RMA payload per frame: a 64 MiB transfer is cut into chunks that the
/// connection interleaves with stream data.
constexpr size_t kChunk = 64 * 1024;
/// The largest payload a peer may send in one frame (chunk + its fields).
constexpr size_t kMaxPayload = kChunk + 64;

enum class Frame : uint8_t {
    hello = 1,      ///< magic, version: first frame each way
    data = 2,       ///< the application's stream bytes
    end = 3,        ///< the application's end of stream (shutdown_write)
    read_req = 4,   ///< tag = op; id, key, offset, len
    read_data = 5,  ///< tag = op; offset within the op, bytes
    read_done = 6,  ///< tag = op; status, reason
    write_data = 7, ///< tag = op; id, key, offset in the exposure, bytes (flag last)
    write_done = 8, ///< tag = op; status, reason
};
constexpr uint8_t kLast = 1;

struct Header {
    uint32_t len = 0; ///< payload bytes after the header
    Frame type = Frame::data;
    uint8_t flags = 0;
    uint64_t tag = 0;
};

void put_header(char out[kHeaderSize], const Header &h);
Header get_header(const char in[kHeaderSize]);

void put_u32(std::string &out, uint32_t v);
void put_u64(std::string &out, uint64_t v);
uint32_t get_u32(const char *in);
uint64_t get_u64(const char *in);

/// What an emulated descriptor names: one exposure of one connection.
struct Descriptor {
    uint64_t id = 0;     ///< the exposure on the exposing side
    uint64_t key = 0;    ///< a random key: knowing an id is not enough
    uint64_t len = 0;    ///< bytes exposed
    uint32_t access = 0; ///< TW_RMA_READ | TW_RMA_WRITE
};
constexpr size_t kDescriptorSize = 36;

std::string encode(const Descriptor &d);
/// false (and why) for bytes that are not an emulated descriptor.
bool decode(std::string_view bytes, Descriptor *out, std::string *why);

} // namespace twinwire::rma
