// SPDX-License-Identifier: MIT
// The RDMA wire protocol: the hello exchanged in rdma_cm private data, the
// control messages sent with SEND, and the immediate value of data WRITEs.
// Everything on the wire is big-endian; layouts are pinned by static_assert.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace twrdma {

constexpr uint32_t kHelloMagic = 0x54575244;  // "TWRD"
constexpr uint32_t kRejectMagic = 0x5457524a; // "TWRJ"
/// Version 4: version 3, and a receiver may move the stream to a new ring
/// of another size (RESIZE, answered by RESIZE_ACK at a stream offset), and
/// a sender marks data it wrote while more waited for ring space (the
/// receiver's cue to grow).  Version 3: the receive ring is kRingSegments
/// segments, each behind its own memory window, bound while the segment is
/// free and invalidated once the peer filled it; RING names the ring and
/// every segment's first key.
/// Version 2 (one window over the whole ring) let a peer overwrite bytes
/// not read yet, version 1 (the slab's rkey in the hello) let it write
/// outside its ring; neither is spoken any more.
constexpr uint8_t kProtoMin = 3;
constexpr uint8_t kProtoMax = 4;
/// The first version with RESIZE and data marked "more waiting".
constexpr uint8_t kProtoResize = 4;
/// Segments of a receive ring (each rdma.ring_size / kRingSegments bytes).
constexpr uint32_t kRingSegments = 8;
/// The key of segment window `i` on lap `lap` of the ring: the key RING
/// named for lap 0, its low byte advanced by one per lap (a type-2 window
/// takes a new 8-bit key on every bind).
inline uint32_t segment_rkey(uint32_t lap0_rkey, uint64_t lap)
{
    return (lap0_rkey & ~0xffu) | ((lap0_rkey + static_cast<uint32_t>(lap)) & 0xffu);
}
/// Feature bits both ends must understand; none defined in version 1.
constexpr uint32_t kFeaturesKnown = 0;

/// Handshake of either side: versions, features, the size of the sender's
/// receive ring and how many receives it posted.  Sent in rdma_connect /
/// rdma_accept private data.  Where the ring is and its rkey follow in RING.
struct WireHello {
    uint32_t magic;          ///< kHelloMagic
    uint8_t proto_min;       ///< lowest protocol version the sender speaks
    uint8_t proto_max;       ///< highest
    uint8_t proto_chosen;    ///< accept only: the version in use (0 in connect)
    uint8_t reserved0;       ///< 0
    uint32_t features;       ///< feature bits the sender requires
    uint32_t rkey;           ///< version 1 only; 0 (the rkey travels in RING)
    uint64_t ring_addr;      ///< version 1 only; 0 (the address travels in RING)
    uint32_t ring_size;      ///< bytes, power of two
    uint16_t recv_depth;     ///< receives posted before connect/accept = initial credits
    uint16_t credit_reserve; ///< credits the peer keeps for control messages
    uint32_t reserved1[4];   ///< 0
};
static_assert(sizeof(WireHello) == 48, "hello must fit the 56 bytes of a connect request");
static_assert(offsetof(WireHello, rkey) == 12 && offsetof(WireHello, ring_addr) == 16 &&
                  offsetof(WireHello, ring_size) == 24 && offsetof(WireHello, recv_depth) == 28,
              "hello layout is part of the wire protocol");

/// Reasons for a twinwire reject (in WireReject.reason).
enum class RejectReason : uint16_t {
    BadHello = 1,      ///< the hello was malformed
    Version = 2,       ///< no common protocol version
    Features = 3,      ///< required features unknown
    PoolExhausted = 4, ///< no registered memory for a new connection
    Backlog = 5,       ///< too many connections waiting to be accepted
    Shutdown = 6,      ///< the listener is closing
    Resources = 7,     ///< a verbs resource could not be created
};

/// Sent with rdma_reject so the client can tell a twinwire refusal (with a
/// reason) from "nobody listens there".
struct WireReject {
    uint32_t magic;    ///< kRejectMagic
    uint8_t proto_min; ///< what the server speaks
    uint8_t proto_max;
    uint16_t reason; ///< RejectReason
    char text[120];  ///< NUL-terminated reason for the client's last_error
};
static_assert(sizeof(WireReject) == 128, "reject must fit the 148 bytes of a CM reject");

/// Control message types (SEND).
/// RING names the sender's receive ring (address in `sent`) and the keys of
/// its segment windows (WireRing) once they are bound: the hello carries no
/// rkey.  RESIZE (version 4, WireRing too) offers a new receive ring: its
/// address in `sent`, its size in `rkey`, its windows' first keys after the
/// header.  The peer answers RESIZE_ACK with `sent` = the stream offset from
/// which it writes the new ring (every byte before it went to the old one).
enum class Ctrl : uint8_t {
    Credit = 1,
    Shutdown = 2,
    Keepalive = 3,
    KeepaliveAck = 4,
    Ring = 5,
    Resize = 6,
    ResizeAck = 7
};
/// Whether control message `type` carries segment keys (WireRing).
inline bool ctrl_has_keys(uint8_t type)
{
    return type == static_cast<uint8_t>(Ctrl::Ring) || type == static_cast<uint8_t>(Ctrl::Resize);
}
/// Receive rings a RESIZE may offer: a power of two in this range.
constexpr uint64_t kResizeMinRing = 4096;
constexpr uint64_t kResizeMaxRing = 1u << 30;

/// Every control message has this one fixed layout.
struct WireCtrl {
    uint32_t magic;    ///< kHelloMagic
    uint8_t version;   ///< negotiated protocol version
    uint8_t type;      ///< Ctrl
    uint16_t reserved; ///< 0
    uint32_t credits;  ///< receives reposted since the last report (returned credits)
    uint32_t rkey;     ///< RESIZE: the new ring's size; else 0 (version 2 put RING's one key here)
    uint64_t consumed; ///< cumulative bytes of the receiver's ring consumed
    uint64_t
        sent; ///< Shutdown, ResizeAck: cumulative bytes written before it; Ring, Resize: the ring's address; else 0
};
static_assert(sizeof(WireCtrl) == 32, "control message layout is part of the wire protocol");
constexpr size_t kRecvBufSize = 64; ///< every posted receive takes a control message
static_assert(sizeof(WireCtrl) <= kRecvBufSize, "a control message fits a receive buffer");

/// RING and RESIZE: the control header, then the lap-0 key of every segment window.
struct WireRing {
    WireCtrl head;
    uint32_t rkeys[kRingSegments];
};
static_assert(sizeof(WireRing) == kRecvBufSize, "RING fits a receive buffer");

/// Immediate data of a data WRITE_WITH_IMM: type(2) | credits(6) | length(24).
/// Type 2 (version 4): data, and the sender holds more that waits for space
/// in this ring.
constexpr uint32_t kImmTypeData = 1;
constexpr uint32_t kImmTypeDataMore = 2;
constexpr uint32_t kImmMaxCredits = 63;
constexpr uint32_t kImmMaxLen = (1u << 24) - 1;

struct Imm {
    uint32_t type;
    uint32_t credits;
    uint32_t len;
};
/// Host-order value for ibv_send_wr.imm_data is converted with htonl by the caller.
inline uint32_t imm_encode(uint32_t credits, uint32_t len, uint32_t type = kImmTypeData)
{
    return (type << 30) | ((credits & 0x3f) << 24) | (len & 0xffffff);
}
inline Imm imm_decode(uint32_t v) { return Imm{v >> 30, (v >> 24) & 0x3f, v & 0xffffff}; }

/// Encode / decode (all fields to / from big-endian).  decode_* return ""
/// when valid, otherwise why not (and, for a hello, the reason a server
/// gives in its reject: Features for unknown required features, else BadHello).
WireHello hello_to_wire(const WireHello &host_order);
std::string hello_from_wire(const void *data, size_t len, WireHello *out, RejectReason *reason = nullptr);
/// The version both sides speak, or 0.
uint8_t negotiate(const WireHello &a, uint8_t own_min, uint8_t own_max);

WireReject reject_make(RejectReason reason, const std::string &text);
/// True when `data` is a twinwire reject; fills reason and text.
bool reject_from_wire(const void *data, size_t len, RejectReason *reason, std::string *text);

WireCtrl ctrl_to_wire(const WireCtrl &host_order);
/// RING and RESIZE are sizeof(WireRing) bytes, every other type
/// sizeof(WireCtrl); RESIZE and RESIZE_ACK only from version 4 on.
std::string ctrl_from_wire(const void *data, size_t len, uint8_t version, WireCtrl *out);
WireRing ring_to_wire(const WireCtrl &host_order, const uint32_t (&rkeys)[kRingSegments]);
/// The segment keys of a RING that ctrl_from_wire accepted.
void ring_keys_from_wire(const void *data, uint32_t (&rkeys)[kRingSegments]);
const char *ctrl_name(uint8_t type);

} // namespace twrdma
