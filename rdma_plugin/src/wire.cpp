// SPDX-License-Identifier: MIT
#include "wire.hpp"

#include <endian.h>

#include <cstdio>
#include <cstring>

namespace twrdma {

WireHello hello_to_wire(const WireHello &h)
{
    WireHello w{};
    w.magic = htobe32(h.magic);
    w.proto_min = h.proto_min;
    w.proto_max = h.proto_max;
    w.proto_chosen = h.proto_chosen;
    w.features = htobe32(h.features);
    w.rkey = htobe32(h.rkey);
    w.ring_addr = htobe64(h.ring_addr);
    w.ring_size = htobe32(h.ring_size);
    w.recv_depth = htobe16(h.recv_depth);
    w.credit_reserve = htobe16(h.credit_reserve);
    return w;
}

std::string hello_from_wire(const void *data, size_t len, WireHello *out, RejectReason *reason)
{
    if (reason) *reason = RejectReason::BadHello;
    if (!data || len < sizeof(WireHello)) return "no twinwire hello in the private data";
    WireHello w;
    std::memcpy(&w, data, sizeof w);
    WireHello h{};
    h.magic = be32toh(w.magic);
    if (h.magic != kHelloMagic) return "no twinwire hello in the private data (bad magic)";
    h.proto_min = w.proto_min;
    h.proto_max = w.proto_max;
    h.proto_chosen = w.proto_chosen;
    h.features = be32toh(w.features);
    h.rkey = be32toh(w.rkey);
    h.ring_addr = be64toh(w.ring_addr);
    h.ring_size = be32toh(w.ring_size);
    h.recv_depth = be16toh(w.recv_depth);
    h.credit_reserve = be16toh(w.credit_reserve);
    char why[160];
    if (h.proto_min == 0 || h.proto_min > h.proto_max) {
        std::snprintf(why, sizeof why, "hello has a bad version range %u..%u", h.proto_min, h.proto_max);
        return why;
    }
    if (h.features & ~kFeaturesKnown) {
        if (reason) *reason = RejectReason::Features;
        std::snprintf(why, sizeof why, "hello requires unknown features 0x%x", h.features & ~kFeaturesKnown);
        return why;
    }
    if (h.ring_size < 4096 || (h.ring_size & (h.ring_size - 1)) != 0) {
        std::snprintf(why, sizeof why, "hello has a bad ring size %u (power of two >= 4096 expected)", h.ring_size);
        return why;
    }
    if (h.recv_depth < 4 || h.credit_reserve < 1 || h.credit_reserve * 2u > h.recv_depth) {
        std::snprintf(why, sizeof why, "hello has bad credits: recv_depth %u, reserve %u", h.recv_depth,
                      h.credit_reserve);
        return why;
    }
    *out = h;
    return "";
}

uint8_t negotiate(const WireHello &peer, uint8_t own_min, uint8_t own_max)
{
    uint8_t hi = peer.proto_max < own_max ? peer.proto_max : own_max;
    uint8_t lo = peer.proto_min > own_min ? peer.proto_min : own_min;
    return hi >= lo ? hi : 0;
}

WireReject reject_make(RejectReason reason, const std::string &text)
{
    WireReject r{};
    r.magic = htobe32(kRejectMagic);
    r.proto_min = kProtoMin;
    r.proto_max = kProtoMax;
    r.reason = htobe16(static_cast<uint16_t>(reason));
    std::snprintf(r.text, sizeof r.text, "%s", text.c_str());
    return r;
}

bool reject_from_wire(const void *data, size_t len, RejectReason *reason, std::string *text)
{
    if (!data || len < sizeof(WireReject)) return false;
    WireReject r;
    std::memcpy(&r, data, sizeof r);
    if (be32toh(r.magic) != kRejectMagic) return false;
    r.text[sizeof r.text - 1] = '\0';
    *reason = static_cast<RejectReason>(be16toh(r.reason));
    *text = r.text;
    return true;
}

WireCtrl ctrl_to_wire(const WireCtrl &c)
{
    WireCtrl w{};
    w.magic = htobe32(kHelloMagic);
    w.version = c.version;
    w.type = c.type;
    w.credits = htobe32(c.credits);
    w.rkey = htobe32(c.rkey);
    w.consumed = htobe64(c.consumed);
    w.sent = htobe64(c.sent);
    return w;
}

std::string ctrl_from_wire(const void *data, size_t len, uint8_t version, WireCtrl *out)
{
    char why[128];
    if (len < sizeof(WireCtrl)) {
        std::snprintf(why, sizeof why, "control message of %zu bytes (expected %zu)", len, sizeof(WireCtrl));
        return why;
    }
    WireCtrl w;
    std::memcpy(&w, data, sizeof w);
    size_t expected = ctrl_has_keys(w.type) ? sizeof(WireRing) : sizeof(WireCtrl);
    if (len != expected) {
        std::snprintf(why, sizeof why, "control message of %zu bytes (expected %zu)", len, expected);
        return why;
    }
    if (be32toh(w.magic) != kHelloMagic) return "control message with a bad magic";
    if (w.version != version) {
        std::snprintf(why, sizeof why, "control message of version %u on a version %u connection", w.version, version);
        return why;
    }
    uint8_t last = version >= kProtoResize ? static_cast<uint8_t>(Ctrl::ResizeAck) : static_cast<uint8_t>(Ctrl::Ring);
    if (w.type < static_cast<uint8_t>(Ctrl::Credit) || w.type > last) {
        std::snprintf(why, sizeof why, "control message of unknown type %u", w.type);
        return why;
    }
    if (w.reserved != 0) return "control message with non-zero reserved fields";
    if (w.rkey != 0 && w.type != static_cast<uint8_t>(Ctrl::Resize))
        return "control message with an rkey in its header (RING's keys follow the header)";
    WireCtrl c{};
    c.magic = kHelloMagic;
    c.version = w.version;
    c.type = w.type;
    c.credits = be32toh(w.credits);
    c.rkey = be32toh(w.rkey);
    c.consumed = be64toh(w.consumed);
    c.sent = be64toh(w.sent);
    *out = c;
    return "";
}

WireRing ring_to_wire(const WireCtrl &c, const uint32_t (&rkeys)[kRingSegments])
{
    WireRing r{};
    r.head = ctrl_to_wire(c);
    for (uint32_t i = 0; i < kRingSegments; ++i) r.rkeys[i] = htobe32(rkeys[i]);
    return r;
}

void ring_keys_from_wire(const void *data, uint32_t (&rkeys)[kRingSegments])
{
    WireRing r;
    std::memcpy(&r, data, sizeof r);
    for (uint32_t i = 0; i < kRingSegments; ++i) rkeys[i] = be32toh(r.rkeys[i]);
}

const char *ctrl_name(uint8_t type)
{
    switch (static_cast<Ctrl>(type)) {
    case Ctrl::Credit:
        return "CREDIT";
    case Ctrl::Shutdown:
        return "SHUTDOWN";
    case Ctrl::Keepalive:
        return "KEEPALIVE";
    case Ctrl::KeepaliveAck:
        return "KEEPALIVE_ACK";
    case Ctrl::Ring:
        return "RING";
    case Ctrl::Resize:
        return "RESIZE";
    case Ctrl::ResizeAck:
        return "RESIZE_ACK";
    }
    return "UNKNOWN";
}

} // namespace twrdma
