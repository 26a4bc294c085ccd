// SPDX-License-Identifier: MIT
// The property every input must keep, for the randomized test and the
// libFuzzer target: the session never crashes, always answers with
// well-formed RESP, and answers the same whether the bytes come at once or
// in pieces.
#pragma once

#include "session_fixture.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kvd_test {

inline std::string run_in_pieces(const std::string &bytes, uint64_t seed, kvd::RequestLimits limits)
{
    SessionFixture f(limits);
    std::string out;
    size_t pos = 0;
    while (pos < bytes.size()) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t piece = 1 + static_cast<size_t>((seed >> 33) % 97);
        f.input.append(bytes.substr(pos, piece));
        pos += piece;
        out += f.drain_replies(512);
    }
    return out;
}

/// Returns "" when the property holds, else what broke.
inline std::string check_input(const uint8_t *data, size_t size)
{
    const std::string bytes(reinterpret_cast<const char *>(data), size);
    kvd::RequestLimits limits;
    limits.max_request = 4096; // small, so limits are reached often
    limits.max_inline = 512;
    limits.max_args = 64;
    limits.max_reply = 2048;
    SessionFixture whole(limits);
    std::string at_once = whole.feed(bytes);
    std::vector<Value> replies;
    if (!parse_all(at_once, replies)) return "malformed reply stream: " + at_once;
    uint64_t seed = size;
    for (unsigned char c : bytes) seed = seed * 131 + c;
    std::string pieces = run_in_pieces(bytes, seed, limits);
    if (pieces != at_once) return "replies differ when the input arrives in pieces:\n" + at_once + "\n---\n" + pieces;
    return {};
}

} // namespace kvd_test
