// SPDX-License-Identifier: MIT
// A pair of connections joined by a fake RC wire, for fuzzing the data path
// (datapath.cpp) without a device.  ibv_post_send is an inline call
// through qp->context->ops, so the fake is a context whose ops queue the
// work requests; the fuzzer decides when each one reaches the peer (RDMA
// WRITE into its ring, a receive of its shared-queue share consumed, a
// completion queued) and when completions are polled.  The fake checks what real hardware
// would punish: writes outside the peer's ring or over unread bytes, a
// message with no receive posted (RNR), more WRs than the SQ holds, local
// buffers outside the registered regions.  A mock of the verbs: a unit test
// of the data path's arithmetic, never a stand-in for the feature.
#pragma once

#include "core.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace twfuzz {

[[noreturn]] void broken(const std::string &what);
inline void expect(bool ok, const char *what)
{
    if (!ok) broken(what);
}
/// `who` is the connection ("a", "b"); no string is built unless it fails.
inline void expect(bool ok, const std::string &who, const char *what)
{
    if (!ok) broken(who + ": " + what);
}

/// A posted send WR as the fake wire carries it.
struct WireWr {
    uint64_t wr_id = 0;
    ibv_wr_opcode opcode = IBV_WR_RDMA_WRITE;
    bool signalled = false;
    uint32_t imm_net = 0;
    uint64_t remote_addr = 0;
    uint32_t rkey = 0;
    uint64_t seq = 0;          ///< position in this QP's send queue
    std::vector<ibv_sge> sges; ///< read at execution time, as a device does
    std::string inline_data;   ///< IBV_SEND_INLINE: copied at post time
    bool is_inline = false;
    ibv_mw *mw = nullptr; ///< BIND_MW: the window, its new key and range
    uint64_t bind_addr = 0, bind_len = 0;
};

/// A segment window of our receive ring as the fake device sees it.
struct FakeWindow {
    bool bound = false;
    uint32_t rkey = 0;
    uint64_t addr = 0, len = 0;
};

struct Side {
    std::string name;
    tw_transport transport;
    tw_transport_loop loop;
    twrdma::LoopDevice ldev;
    twrdma::Block block;
    tw_conn *c = nullptr;
    ibv_qp qp{};
    // Registered regions, each its own allocation so ASan sees overruns.
    std::unique_ptr<uint8_t[]> rx, tx, recv_bufs, ctrl_bufs;
    ibv_mw mws[twrdma::kRingSegments]{};
    FakeWindow windows[twrdma::kRingSegments];

    std::deque<WireWr> sq;       ///< posted, not yet executed on the peer
    uint64_t sq_posted = 0;      ///< WRs ever posted
    uint64_t sq_retired = 0;     ///< freed by polled signalled completions
    std::deque<uint32_t> recvs;  ///< posted receive buffer indices, in order
    std::deque<ibv_wc> cq;       ///< completions waiting to be polled
    std::deque<uint64_t> cq_seq; ///< for send completions: the WR's seq (else 0)
    bool qp_error = false;       ///< the fake QP went to the error state

    uint64_t landed = 0;        ///< stream bytes the peer's WRITEs put in our ring
    uint64_t landed_at_imm = 0; ///< `landed` at the last WRITE_WITH_IMM
    std::string expect_in;      ///< peer's accepted bytes (what we should read)
    uint64_t read_total = 0;    ///< bytes the application read or consumed
    uint64_t written_total = 0; ///< bytes the application got accepted
    bool tainted = false;       ///< hostile input reached this side

    ~Side();
};

struct Pair {
    Side a, b;
    uint64_t clock_ns = 1'000'000'000;
};

/// Settings both sides use; the fuzzer picks them from the input.
struct Shape {
    uint32_t ring_size, tx_size, recv_depth, control_credits, sq_depth, max_inline;
};

/// Build both connections Established, receives posted, hellos applied.
void pair_init(Pair &p, const Shape &shape);
Side &peer_of(Pair &p, Side &s);
/// Execute the oldest posted send WR of `from` on its peer.  False when none.
bool deliver_one(Pair &p, Side &from);
/// Hand the oldest completion of `s` to the data path.  False when none.
bool poll_one(Pair &p, Side &s);
/// The ring and credit invariants of both connections and the fake wire.
void check_invariants(Pair &p);
/// Byte `i` of the stream `s` writes (so the reader can check it).
inline uint8_t stream_byte(const Side &s, uint64_t i)
{
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ (s.name[0] == 'a' ? 0x5555 : 0xaaaa);
    return static_cast<uint8_t>(x >> 56);
}

} // namespace twfuzz
