// SPDX-License-Identifier: MIT
// A hostile RDMA peer for the write-isolation case: a foreign rdma_cm client
// that completes a real twinwire handshake, learns the rkey and address of
// its own receive ring on the server, and then RDMA WRITEs where a peer must
// not: another connection's ring, its own TX staging and receive buffers,
// and (on a second QP) its old ring after its connection closed.
// Test-only; links rdma-core.
//
//   rdma-isolation-probe SERVER_IP PORT SOURCE_IP|- RING TX LOCAL COUNT [GO_FILE]
//   The server's first slab (docs/rdma-design.md, pool.hpp): COUNT rings
//   of RING bytes, then COUNT local parts of LOCAL bytes (a TX ring of TX
//   bytes, then control slots).  The probe's first connection must get
//   ring 1 (the victim holds ring 0).  Receive buffers are the shared
//   queue's, in registrations of their own with local access only.
//
// With GO_FILE, only the credit-ignoring attempt runs: the probe writes two
// segments of its ring honestly (WRITE_WITH_IMM, pattern byte i = i * 7 + 3),
// prints "wrote N", waits for GO_FILE to exist (the server has them,
// unread), then writes over them from offset 0 as if it had the credit.
//
// `rdma-isolation-probe credits SERVER_IP PORT SOURCE_IP|- COUNT` sends past
// its credits instead: COUNT KEEPALIVEs that return no credit, never
// reposting its receives (so the server can answer only 16 times), and
// prints "credits sent=N first-failure=STATUS cm=EVENT" once the server
// ended the connection (or 20 s passed).
//
// Prints one line per attempt, "TARGET own=STATUS foreign=STATUS", where
// own is a write into the last 64 bytes of the probe's own ring (it must
// succeed, or the probe learnt nothing) and foreign the write the server
// must refuse; STATUS is ibv_wc_status_str() or "no-completion".  Exits 0
// when every attempt ran, 1 when a handshake failed (printed).
#include "wire.hpp"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <endian.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

using namespace twrdma;

namespace {

constexpr uint32_t kDepth = 16;
constexpr size_t kRing = 64 * 1024;
constexpr size_t kGarbage = 4096;

struct Args {
    sockaddr_in dst{};
    sockaddr_in src{};
    bool bind_src = false;
    uint64_t ring = 0, tx = 0, local = 0, count = 0;
    uint64_t base = 0; ///< the slab's first ring (the victim's), learnt by the first session
};

/// The server's ring as the probe learnt it.
struct Window {
    uint64_t addr = 0;
    uint32_t rkey = 0; ///< the key that opens the ring's last bytes
    uint32_t size = 0;
    uint32_t seg_rkeys[kRingSegments] = {}; ///< lap-0 key of each segment's window
};

bool parse_ip(const char *text, uint16_t port, sockaddr_in *out)
{
    std::memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    out->sin_port = htons(port);
    return inet_pton(AF_INET, text, &out->sin_addr) == 1;
}

rdma_cm_event *next_event(rdma_event_channel *ch, int ms = 20000)
{
    pollfd p{ch->fd, POLLIN, 0};
    if (poll(&p, 1, ms) != 1) return nullptr;
    rdma_cm_event *ev = nullptr;
    return rdma_get_cm_event(ch, &ev) == 0 ? ev : nullptr;
}

/// One connection to the server with a real QP, ring and receives.
class Session {
public:
    ~Session() { close(); }

    /// Connect and learn the server's ring; "" or why not.  `rnr_retry`:
    /// 7 waits for a receive for good, 0 fails at once.
    std::string open(const Args &a, uint8_t rnr_retry = 0)
    {
        ch_ = rdma_create_event_channel();
        if (!ch_ || rdma_create_id(ch_, &id_, nullptr, RDMA_PS_TCP)) return errno_text("rdma_create_id");
        sockaddr *source = a.bind_src ? (sockaddr *)&a.src : nullptr;
        rdma_cm_event *ev = nullptr;
        for (int attempt = 0; attempt < 10; attempt++) {
            if (rdma_resolve_addr(id_, source, (sockaddr *)&a.dst, 2000)) return errno_text("rdma_resolve_addr");
            ev = next_event(ch_);
            if (!ev || ev->event != RDMA_CM_EVENT_ADDR_ERROR) break;
            rdma_ack_cm_event(ev);
            ev = nullptr;
        }
        if (!expect(ev, RDMA_CM_EVENT_ADDR_RESOLVED)) return "address not resolved";
        if (rdma_resolve_route(id_, 5000)) return errno_text("rdma_resolve_route");
        if (!expect(next_event(ch_), RDMA_CM_EVENT_ROUTE_RESOLVED)) return "route not resolved";

        pd_ = ibv_alloc_pd(id_->verbs);
        cq_ = pd_ ? ibv_create_cq(id_->verbs, 64, nullptr, nullptr, 0) : nullptr;
        if (!cq_) return errno_text("ibv_alloc_pd/ibv_create_cq");
        mem_ = static_cast<uint8_t *>(aligned_alloc(4096, kRing + kGarbage + kDepth * kRecvBufSize));
        std::memset(mem_, 0xee, kRing + kGarbage + kDepth * kRecvBufSize);
        mr_ = ibv_reg_mr(pd_, mem_, kRing + kGarbage + kDepth * kRecvBufSize,
                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        if (!mr_) return errno_text("ibv_reg_mr");
        ibv_qp_init_attr qa{};
        qa.send_cq = qa.recv_cq = cq_;
        qa.qp_type = IBV_QPT_RC;
        qa.cap.max_send_wr = 16;
        qa.cap.max_recv_wr = kDepth;
        qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
        if (rdma_create_qp(id_, pd_, &qa)) return errno_text("rdma_create_qp");
        for (uint32_t i = 0; i < kDepth; ++i) {
            ibv_sge sge{reinterpret_cast<uint64_t>(recv_buf(i)), static_cast<uint32_t>(kRecvBufSize), mr_->lkey};
            ibv_recv_wr wr{};
            wr.wr_id = 1000 + i;
            wr.sg_list = &sge;
            wr.num_sge = 1;
            ibv_recv_wr *bad = nullptr;
            if (ibv_post_recv(id_->qp, &wr, &bad)) return errno_text("ibv_post_recv");
        }

        WireHello h{};
        h.magic = kHelloMagic;
        h.proto_min = kProtoMin;
        h.proto_max = kProtoMax;
        h.rkey = mr_->rkey;
        h.ring_addr = reinterpret_cast<uint64_t>(mem_);
        h.ring_size = kRing;
        h.recv_depth = kDepth;
        h.credit_reserve = 2;
        WireHello wire = hello_to_wire(h);
        rdma_conn_param p{};
        p.private_data = &wire;
        p.private_data_len = sizeof wire;
        p.retry_count = 2;
        p.rnr_retry_count = rnr_retry;
        if (rdma_connect(id_, &p)) return errno_text("rdma_connect");
        ev = next_event(ch_);
        if (!ev || ev->event != RDMA_CM_EVENT_ESTABLISHED) {
            std::string why = std::string("not established: ") + (ev ? rdma_event_str(ev->event) : "no event");
            if (ev) rdma_ack_cm_event(ev);
            return why;
        }
        WireHello server{};
        std::string bad = hello_from_wire(ev->param.conn.private_data, ev->param.conn.private_data_len, &server);
        rdma_ack_cm_event(ev);
        if (!bad.empty()) return "server hello: " + bad;
        version_ = server.proto_chosen;
        window_.addr = server.ring_addr;
        window_.rkey = server.rkey;
        window_.size = server.ring_size;
        return window_.rkey ? "" : await_ring();
    }

    const Window &window() const { return window_; }

    /// RDMA WRITE `len` bytes of 0xee to (addr, rkey), signalled; the
    /// completion status text.
    std::string write(uint64_t addr, uint32_t rkey, size_t len) { return write_from(kRing, addr, rkey, len, nullptr); }

    /// Write the pattern into the first `segments` segments of the ring,
    /// honestly: one WRITE per segment with its key, the last with the
    /// immediate announcing them.  The last completion's status text.
    std::string write_segments(uint32_t segments)
    {
        size_t seg = window_.size / kRingSegments;
        for (size_t i = 0; i < segments * seg; ++i) mem_[i] = static_cast<uint8_t>(i * 7 + 3);
        std::string status;
        for (uint32_t i = 0; i < segments; ++i) {
            uint32_t imm = htonl(imm_encode(0, static_cast<uint32_t>(segments * seg)));
            status = write_from(i * seg, window_.addr + i * seg, window_.seg_rkeys[i], seg,
                                i + 1 == segments ? &imm : nullptr);
            if (status != "success") break;
        }
        return status;
    }

    /// RDMA WRITE (WITH_IMM when `imm`) from mem_ + off; the status text.
    std::string write_from(size_t off, uint64_t addr, uint32_t rkey, size_t len, const uint32_t *imm)
    {
        ibv_sge sge{reinterpret_cast<uint64_t>(mem_ + off), static_cast<uint32_t>(len), mr_->lkey};
        ibv_send_wr wr{};
        wr.wr_id = 1;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
        if (imm) wr.imm_data = *imm;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = addr;
        wr.wr.rdma.rkey = rkey;
        ibv_send_wr *bad = nullptr;
        if (ibv_post_send(id_->qp, &wr, &bad)) return errno_text("ibv_post_send");
        ibv_wc wc{};
        if (!poll_send(&wc)) return "no-completion";
        return ibv_wc_status_str(wc.status);
    }

    /// SEND `count` KEEPALIVEs that return no credit, at most the send
    /// queue's 16 at a time; stops at the first failed completion.  The
    /// number of completed sends, and that failure's status text ("" when
    /// none failed).
    uint32_t send_keepalives(uint32_t count, std::string *failure)
    {
        WireCtrl c{};
        c.magic = kHelloMagic;
        c.version = version_;
        c.type = static_cast<uint8_t>(Ctrl::Keepalive);
        WireCtrl wire = ctrl_to_wire(c);
        std::memcpy(mem_ + kRing, &wire, sizeof wire);
        uint32_t posted = 0, done = 0;
        while (done < count) {
            while (posted < count && posted - done < 16) {
                ibv_sge sge{reinterpret_cast<uint64_t>(mem_ + kRing), sizeof wire, mr_->lkey};
                ibv_send_wr wr{};
                wr.wr_id = 2;
                wr.sg_list = &sge;
                wr.num_sge = 1;
                wr.opcode = IBV_WR_SEND;
                wr.send_flags = IBV_SEND_SIGNALED;
                ibv_send_wr *bad = nullptr;
                if (ibv_post_send(id_->qp, &wr, &bad)) {
                    *failure = errno_text("ibv_post_send");
                    return done;
                }
                posted++;
            }
            ibv_wc wc{};
            if (!poll_send(&wc)) {
                *failure = "no-completion";
                return done;
            }
            if (wc.status != IBV_WC_SUCCESS) {
                *failure = ibv_wc_status_str(wc.status);
                return done;
            }
            done++;
        }
        return done;
    }

    /// The next CM event's name within `ms` ("no event" when none).
    std::string await_cm_event(int ms)
    {
        rdma_cm_event *ev = next_event(ch_, ms);
        if (!ev) return "no event";
        std::string name = rdma_event_str(ev->event);
        rdma_ack_cm_event(ev);
        return name;
    }

    /// Disconnect and wait for the CM to say so.
    void disconnect()
    {
        if (!id_) return;
        rdma_disconnect(id_);
        for (int i = 0; i < 4; ++i) {
            rdma_cm_event *ev = next_event(ch_, 5000);
            if (!ev) break;
            bool done = ev->event == RDMA_CM_EVENT_DISCONNECTED;
            rdma_ack_cm_event(ev);
            if (done) break;
        }
    }

    void close()
    {
        if (id_ && id_->qp) rdma_destroy_qp(id_);
        if (mr_) ibv_dereg_mr(mr_);
        if (cq_) ibv_destroy_cq(cq_);
        if (pd_) ibv_dealloc_pd(pd_);
        if (id_) rdma_destroy_id(id_);
        if (ch_) rdma_destroy_event_channel(ch_);
        free(mem_);
        id_ = nullptr, mr_ = nullptr, cq_ = nullptr, pd_ = nullptr, ch_ = nullptr, mem_ = nullptr;
    }

private:
    static std::string errno_text(const char *call) { return std::string(call) + ": " + std::strerror(errno); }

    bool expect(rdma_cm_event *ev, rdma_cm_event_type type)
    {
        if (!ev) return false;
        bool ok = ev->event == type;
        rdma_ack_cm_event(ev);
        return ok;
    }

    uint8_t *recv_buf(uint32_t i) { return mem_ + kRing + kGarbage + i * kRecvBufSize; }

    /// A send completion within 20 s (receive completions are kept aside).
    bool poll_send(ibv_wc *out)
    {
        auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < end) {
            ibv_wc wc{};
            int n = ibv_poll_cq(cq_, 1, &wc);
            if (n < 0) return false;
            if (n == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            if (wc.wr_id < 1000) {
                *out = wc;
                return true;
            }
        }
        return false;
    }

    /// The server names its ring in a control message after the hello
    /// (the hello carries no rkey): wait for it.
    std::string await_ring()
    {
        auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < end) {
            ibv_wc wc{};
            int n = ibv_poll_cq(cq_, 1, &wc);
            if (n == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            if (n < 0 || wc.status != IBV_WC_SUCCESS) return "no control message with the ring";
            if (wc.wr_id < 1000 || wc.opcode != IBV_WC_RECV) continue;
            const uint8_t *m = recv_buf(static_cast<uint32_t>(wc.wr_id - 1000));
            WireCtrl head{};
            if (!ctrl_from_wire(m, wc.byte_len, kProtoMax, &head).empty() || head.type != uint8_t(Ctrl::Ring)) continue;
            window_.addr = head.sent;
            ring_keys_from_wire(m, window_.seg_rkeys);
            window_.rkey = window_.seg_rkeys[kRingSegments - 1];
            return "";
        }
        return "no control message with the ring within 20 s";
    }

    rdma_event_channel *ch_ = nullptr;
    rdma_cm_id *id_ = nullptr;
    ibv_pd *pd_ = nullptr;
    ibv_cq *cq_ = nullptr;
    ibv_mr *mr_ = nullptr;
    uint8_t *mem_ = nullptr;
    Window window_;
    uint8_t version_ = kProtoMax; ///< the server's choice
};

enum class Target { VictimRing, VictimTx, PastRingEnd, StraddlingRingEnd, OwnTx, OwnCtrl };

const char *target_name(Target t)
{
    switch (t) {
    case Target::VictimRing:
        return "victim-ring";
    case Target::VictimTx:
        return "victim-tx-ring";
    case Target::PastRingEnd:
        return "past-own-ring-end";
    case Target::StraddlingRingEnd:
        return "straddling-own-ring-end";
    case Target::OwnTx:
        return "own-tx-ring";
    case Target::OwnCtrl:
        return "own-control-slots";
    }
    return "?";
}

/// Where `t` is, given the probe's own ring at `own`.
uint64_t target_addr(const Args &a, Target t, uint64_t own)
{
    uint64_t index = (own - a.base) / a.ring;
    uint64_t own_local = a.base + a.count * a.ring + index * a.local;
    switch (t) {
    case Target::VictimRing:
        return a.base;
    case Target::VictimTx:
        return a.base + a.count * a.ring;
    case Target::PastRingEnd:
        return own + a.ring;
    case Target::StraddlingRingEnd:
        return own + a.ring - 64;
    case Target::OwnTx:
        return own_local;
    case Target::OwnCtrl:
        return own_local + a.tx;
    }
    return 0;
}

/// Open a session, prove the rkey works on the probe's own ring, then try
/// `target`.
bool attempt(Args &a, Target target)
{
    Session s;
    std::string why = s.open(a);
    if (!why.empty()) {
        std::printf("%s handshake failed: %s\n", target_name(target), why.c_str());
        return false;
    }
    const Window &w = s.window();
    if (!a.base) a.base = w.addr - a.ring; // the first session holds ring 1
    std::string own = s.write(w.addr + w.size - 64, w.rkey, 64);
    std::string foreign = s.write(target_addr(a, target, w.addr), w.rkey, kGarbage);
    std::printf("%s own=%s foreign=%s ring=%llu\n", target_name(target), own.c_str(), foreign.c_str(),
                static_cast<unsigned long long>((w.addr - a.base) / a.ring));
    std::fflush(stdout);
    return true;
}

/// Learn a ring, close that connection, then write to it with its old rkey
/// from a second QP.
/// Write two segments honestly, wait for GO_FILE, then write over them as
/// if the credit allowed it.
bool attempt_over_unread(const Args &a, const char *go_file)
{
    Session s;
    std::string why = s.open(a);
    if (!why.empty()) {
        std::printf("unread-bytes handshake failed: %s\n", why.c_str());
        return false;
    }
    std::string own = s.write_segments(2);
    std::printf("wrote %u\n", 2 * s.window().size / kRingSegments);
    std::fflush(stdout);
    for (int i = 0; i < 600 && access(go_file, F_OK) != 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::string foreign = s.write_from(kRing, s.window().addr, s.window().seg_rkeys[0], kGarbage, nullptr);
    std::printf("unread-bytes own=%s foreign=%s\n", own.c_str(), foreign.c_str());
    return true;
}

/// Send past the credits the server gave, returning none.
bool attempt_past_credits(const Args &a, uint32_t count)
{
    Session s;
    // RNR would end the flood on the probe's side: wait for receives.
    std::string why = s.open(a, 7);
    if (!why.empty()) {
        std::printf("credits handshake failed: %s\n", why.c_str());
        return false;
    }
    std::string failure;
    uint32_t sent = s.send_keepalives(count, &failure);
    std::string event = s.await_cm_event(20000);
    std::printf("credits sent=%u first-failure=%s cm=%s\n", sent, failure.empty() ? "none" : failure.c_str(),
                event.c_str());
    return true;
}

bool attempt_after_close(const Args &a)
{
    Window old;
    {
        Session first;
        std::string why = first.open(a);
        if (!why.empty()) {
            std::printf("after-close handshake failed: %s\n", why.c_str());
            return false;
        }
        old = first.window();
        first.disconnect();
    }
    // Give the server time to tear the connection down and reuse nothing
    // early: whatever it does, the old rkey must be dead.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    Session second;
    std::string why = second.open(a);
    if (!why.empty()) {
        std::printf("after-close handshake failed: %s\n", why.c_str());
        return false;
    }
    std::string own = second.write(second.window().addr + second.window().size - 64, second.window().rkey, 64);
    std::string foreign = second.write(old.addr, old.rkey, kGarbage);
    std::printf("after-close own=%s foreign=%s same-rkey=%d\n", own.c_str(), foreign.c_str(),
                old.rkey == second.window().rkey);
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    Args a;
    if (argc == 6 && std::strcmp(argv[1], "credits") == 0) {
        if (!parse_ip(argv[2], static_cast<uint16_t>(std::atoi(argv[3])), &a.dst)) return 2;
        a.bind_src = std::strcmp(argv[4], "-") != 0;
        if (a.bind_src && !parse_ip(argv[4], 0, &a.src)) return 2;
        return attempt_past_credits(a, static_cast<uint32_t>(std::strtoul(argv[5], nullptr, 0))) ? 0 : 1;
    }
    if ((argc != 8 && argc != 9) || !parse_ip(argv[1], static_cast<uint16_t>(std::atoi(argv[2])), &a.dst)) {
        std::fprintf(stderr,
                     "usage: %s SERVER_IP PORT SOURCE_IP|- RING TX LOCAL COUNT [GO_FILE]\n       %s credits "
                     "SERVER_IP PORT SOURCE_IP|- COUNT\n",
                     argv[0], argv[0]);
        return 2;
    }
    a.bind_src = std::strcmp(argv[3], "-") != 0;
    if (a.bind_src && !parse_ip(argv[3], 0, &a.src)) return 2;
    a.ring = std::strtoull(argv[4], nullptr, 0);
    a.tx = std::strtoull(argv[5], nullptr, 0);
    a.local = std::strtoull(argv[6], nullptr, 0);
    a.count = std::strtoull(argv[7], nullptr, 0);
    if (argc == 9) return attempt_over_unread(a, argv[8]) ? 0 : 1;
    bool ok = true;
    for (Target t : {Target::VictimRing, Target::VictimTx, Target::PastRingEnd, Target::StraddlingRingEnd,
                     Target::OwnTx, Target::OwnCtrl})
        ok = attempt(a, t) && ok;
    ok = attempt_after_close(a) && ok;
    return ok ? 0 : 1;
}
