// SPDX-License-Identifier: MIT
// fuzz-rdma-wire: hostile bytes into the RDMA wire decoders (hello, reject,
// control message, immediate).  The first input byte picks the decoder, the
// rest is exactly what a peer sent (copied to a buffer of that size, so any
// read past it is an ASan report).  Checked: a decode either fails with a
// reason or yields a value that passes the documented validation and
// re-encodes to the same bytes.
#include "wire.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

using namespace twrdma;

namespace {

[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "fuzz-rdma-wire: invariant broken: %s\n", what);
    std::abort();
}

void expect(bool ok, const char *what)
{
    if (!ok) broken(what);
}

bool is_pow2(uint64_t v) { return v && (v & (v - 1)) == 0; }

void fuzz_hello(const uint8_t *data, size_t len)
{
    WireHello out{};
    out.magic = 0xdeadbeef; // untouched on failure
    RejectReason reason = RejectReason::Resources;
    std::string why = hello_from_wire(data, len, &out, &reason);
    if (!why.empty()) {
        expect(out.magic == 0xdeadbeef, "a refused hello filled the output");
        expect(reason == RejectReason::BadHello || reason == RejectReason::Features,
               "a refused hello names BadHello or Features");
        expect(why.size() < 200, "the reason is one short line");
        return;
    }
    expect(len >= sizeof(WireHello), "a hello shorter than 48 bytes was accepted");
    expect(out.magic == kHelloMagic, "accepted hello has the magic");
    expect(out.proto_min >= 1 && out.proto_min <= out.proto_max, "accepted hello has a version range");
    expect((out.features & ~kFeaturesKnown) == 0, "accepted hello requires only known features");
    expect(out.ring_size >= 4096 && is_pow2(out.ring_size), "accepted ring size is a power of two >= 4096");
    expect(out.recv_depth >= 4 && out.credit_reserve >= 1 && out.credit_reserve * 2u <= out.recv_depth,
           "accepted credits are consistent");
    // What we would send back decodes to the same hello.
    WireHello again{};
    WireHello wire = hello_to_wire(out);
    expect(hello_from_wire(&wire, sizeof wire, &again).empty(), "a re-encoded accepted hello is accepted");
    expect(std::memcmp(&again, &out, sizeof out) == 0, "hello round trip");
    uint8_t v = negotiate(out, kProtoMin, kProtoMax);
    expect(v == 0 || (v >= kProtoMin && v <= kProtoMax && v >= out.proto_min && v <= out.proto_max),
           "negotiated version lies in both ranges");
}

void fuzz_reject(const uint8_t *data, size_t len)
{
    RejectReason reason{};
    std::string text = "untouched";
    if (!reject_from_wire(data, len, &reason, &text)) {
        expect(text == "untouched", "a non-reject filled the text");
        return;
    }
    expect(len >= sizeof(WireReject), "a short reject was accepted");
    expect(text.size() < sizeof(WireReject::text), "reject text stops inside its field");
    expect(text.find('\0') == std::string::npos, "reject text has no NUL");
}

void fuzz_ctrl(const uint8_t *data, size_t len)
{
    if (len < 1) return;
    uint8_t version = data[0]; // the connection's negotiated version
    data++;
    len--;
    WireCtrl out{};
    std::string why = ctrl_from_wire(data, len, version, &out);
    if (!why.empty()) {
        expect(out.magic == 0, "a refused control message filled the output");
        return;
    }
    bool ring = ctrl_has_keys(out.type);
    expect(len == (ring ? sizeof(WireRing) : sizeof(WireCtrl)), "a control message of the wrong size was accepted");
    expect(out.version == version, "accepted control message has the connection's version");
    uint8_t last = version >= kProtoResize ? static_cast<uint8_t>(Ctrl::ResizeAck) : static_cast<uint8_t>(Ctrl::Ring);
    expect(out.type >= 1 && out.type <= last, "accepted control type is known to the connection's version");
    expect(out.rkey == 0 || out.type == static_cast<uint8_t>(Ctrl::Resize),
           "only RESIZE carries a value in the rkey field (RING's keys follow its header)");
    expect(std::strcmp(ctrl_name(out.type), "UNKNOWN") != 0, "accepted control type has a name");
    // Validated strictly: re-encoding gives back the very bytes received.
    WireCtrl wire = ctrl_to_wire(out);
    expect(std::memcmp(&wire, data, sizeof wire) == 0, "control message round trip");
    if (ring) {
        uint32_t keys[kRingSegments];
        ring_keys_from_wire(data, keys);
        WireRing again = ring_to_wire(out, keys);
        expect(std::memcmp(&again, data, sizeof again) == 0, "RING / RESIZE round trip");
    }
}

void fuzz_imm(const uint8_t *data, size_t len)
{
    if (len < 4) return;
    uint32_t v;
    std::memcpy(&v, data, 4);
    Imm imm = imm_decode(v);
    expect(imm.type < 4 && imm.credits <= kImmMaxCredits && imm.len <= kImmMaxLen, "immediate fields in range");
    if (imm.type == kImmTypeData || imm.type == kImmTypeDataMore)
        expect(imm_encode(imm.credits, imm.len, imm.type) == v, "immediate round trip");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t which = data[0] % 4;
    size_t len = size - 1;
    // Exactly the peer's bytes, nothing after them.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[len ? len : 1]);
    if (len) std::memcpy(copy.get(), data + 1, len);
    switch (which) {
    case 0:
        fuzz_hello(copy.get(), len);
        break;
    case 1:
        fuzz_reject(copy.get(), len);
        break;
    case 2:
        fuzz_ctrl(copy.get(), len);
        break;
    case 3:
        fuzz_imm(copy.get(), len);
        break;
    }
    return 0;
}
