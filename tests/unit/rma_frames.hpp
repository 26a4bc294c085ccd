// SPDX-License-Identifier: MIT
// Frames of the RMA emulation's wire (framework/src/rma_wire.hpp, docs/rma.md)
// built by hand, as a hostile peer sends them: the tests that feed rma::Link
// and the raw-socket peer over TCP share these.
#pragma once

#include "rma_wire.hpp"

#include <cstdint>
#include <string>

namespace twtest::rma_frames {

using twinwire::rma::Frame;

/// A frame whose header declares `len` payload bytes (a lie when it differs).
inline std::string frame(Frame type, uint8_t flags, uint64_t tag, const std::string &payload, uint32_t len)
{
    char h[twinwire::rma::kHeaderSize];
    twinwire::rma::put_header(h, twinwire::rma::Header{len, type, flags, tag});
    return std::string(h, sizeof h) + payload;
}

inline std::string frame(Frame type, uint8_t flags, uint64_t tag, const std::string &payload)
{
    return frame(type, flags, tag, payload, static_cast<uint32_t>(payload.size()));
}

inline std::string hello(uint32_t version = twinwire::rma::kVersion)
{
    std::string p;
    twinwire::rma::put_u32(p, twinwire::rma::kMagic);
    twinwire::rma::put_u32(p, version);
    return frame(Frame::hello, 0, 0, p);
}

inline std::string read_req(uint64_t tag, uint64_t id, uint64_t key, uint64_t offset, uint64_t len)
{
    std::string p;
    twinwire::rma::put_u64(p, id);
    twinwire::rma::put_u64(p, key);
    twinwire::rma::put_u64(p, offset);
    twinwire::rma::put_u64(p, len);
    return frame(Frame::read_req, 0, tag, p);
}

/// The last (here: only) chunk of a write.
inline std::string write_data(uint64_t tag, uint64_t id, uint64_t key, uint64_t offset, const std::string &bytes)
{
    std::string p;
    twinwire::rma::put_u64(p, id);
    twinwire::rma::put_u64(p, key);
    twinwire::rma::put_u64(p, offset);
    return frame(Frame::write_data, twinwire::rma::kLast, tag, p + bytes);
}

} // namespace twtest::rma_frames
