// SPDX-License-Identifier: MIT
// fuzz-rdma-datapath: the plugin's data path (datapath.cpp) between two
// connections on a fake wire (fake_verbs.hpp).  The input is a program:
// application reads, writes, zero-copy sends and receives, shutdowns and
// keepalives on either end, the wire delivering work requests and
// completions in any interleaving RC allows, and hostile immediates,
// control messages and error completions from a peer.  After every step
// the ring and credit invariants hold; while no hostile input was sent,
// every byte read is the byte written, nothing lands over unread bytes,
// no message meets an empty receive queue, and at the end a drain with
// both readers active moves everything written (no credit deadlock).
#include "fake_verbs.hpp"
#include "rdma_core.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace twfuzz;
using namespace twrdma;

namespace {

Shape pick_shape(FuzzedDataProvider &in)
{
    Shape s{};
    s.ring_size = 4096u << in.ConsumeIntegralInRange(0, 4);
    s.tx_size = 4096u << in.ConsumeIntegralInRange(0, 3);
    s.recv_depth = 8u << in.ConsumeIntegralInRange(0, 3);
    s.control_credits = in.ConsumeIntegralInRange<uint32_t>(2, s.recv_depth / 2);
    s.sq_depth = 16u << in.ConsumeIntegralInRange(0, 2);
    s.max_inline = in.ConsumeBool() ? 0 : 64;
    return s;
}

/// Check bytes the application got against what the peer wrote.
void check_read(Pair &p, Side &s, const uint8_t *data, size_t len)
{
    Side &o = peer_of(p, s);
    if (!s.tainted && !o.tainted)
        for (size_t i = 0; i < len; ++i)
            expect(data[i] == stream_byte(o, s.read_total + i), s.name, "read a byte that was not written");
    s.read_total += len;
}

void app_write(Side &s, size_t len, size_t split)
{
    std::vector<uint8_t> buf(len);
    for (size_t i = 0; i < len; ++i) buf[i] = stream_byte(s, s.written_total + i);
    split = std::min(split, len);
    iovec iov[2] = {{buf.data(), split}, {buf.data() + split, len - split}};
    ssize_t n = conn_write(s.c, iov, 2);
    if (n >= 0) {
        expect(size_t(n) <= len && (n > 0 || len == 0), s.name, "write returned an impossible count");
        s.written_total += size_t(n);
    } else {
        expect(n == -EAGAIN || s.c->error || s.c->tx.wr_shut || s.c->tx.write_error, s.name,
               "write failed without cause");
    }
}

void app_read(Pair &p, Side &s, size_t len, size_t split)
{
    static std::vector<uint8_t> buf;
    if (buf.size() < len) buf.resize(len);
    split = std::min(split, len);
    iovec iov[2] = {{buf.data(), split}, {buf.data() + split, len - split}};
    ssize_t n = conn_read(s.c, iov, 2);
    if (n > 0) {
        expect(size_t(n) <= len, s.name, "read more than asked");
        check_read(p, s, buf.data(), size_t(n));
    }
}

void app_zero_copy_send(Side &s, size_t min_len, size_t fill)
{
    tw_buf buf = TW_BUF_INIT;
    if (conn_send_buf_get(s.c, min_len, &buf) != 0) return;
    expect(buf.cap >= min_len && buf.data >= s.tx.get() &&
               static_cast<uint8_t *>(buf.data) + buf.cap <= s.tx.get() + s.c->tx.size,
           s.name, "lent send buffer outside the TX ring or too small");
    size_t len = std::min(fill, buf.cap);
    auto *out = static_cast<uint8_t *>(buf.data);
    for (size_t i = 0; i < len; ++i) out[i] = stream_byte(s, s.written_total + i);
    buf.len = len;
    if (conn_send_buf_submit(s.c, &buf) == 0) s.written_total += len;
}

void app_zero_copy_recv(Pair &p, Side &s, size_t consume_of_256)
{
    tw_buf buf = TW_BUF_INIT;
    if (conn_recv_buf_borrow(s.c, &buf) != 0) return;
    if (buf.len == 0) return; // end-of-stream: nothing was lent
    auto *data = static_cast<const uint8_t *>(buf.data);
    expect(data >= s.rx.get() && data + buf.len <= s.rx.get() + s.c->rx.size, s.name,
           "borrowed bytes outside the ring");
    size_t consumed = buf.len * consume_of_256 / 256;
    check_read(p, s, data, consumed);
    expect(conn_recv_buf_return(s.c, &buf, consumed) == 0, s.name, "returning a borrow");
}

/// A peer sends what it likes: it takes a posted receive like a real one.
bool take_recv(Side &s, uint32_t *index)
{
    if (s.recvs.empty()) return false;
    *index = s.recvs.front();
    s.recvs.pop_front();
    return true;
}

void hostile_imm(Side &s, uint32_t imm, uint32_t byte_len)
{
    uint32_t index;
    if (!take_recv(s, &index)) return;
    s.tainted = true;
    ibv_wc wc{};
    wc.wr_id = make_wr_id(s.c->serial, WrKind::Recv, index);
    wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
    wc.wc_flags = IBV_WC_WITH_IMM;
    wc.imm_data = htonl(imm);
    wc.byte_len = byte_len;
    s.cq.push_back(wc);
    s.cq_seq.push_back(0);
}

void hostile_ctrl(Side &s, FuzzedDataProvider &in)
{
    uint32_t index;
    if (!take_recv(s, &index)) return;
    s.tainted = true;
    uint8_t *buf = s.recv_bufs.get() + size_t(index) * kRecvBufSize;
    uint32_t len;
    if (in.ConsumeBool()) {
        // Well-formed framing, fields chosen by the input: reaches the
        // semantic checks (credits, consumed, SHUTDOWN count).
        WireCtrl m{};
        m.version = s.c->version;
        m.type = in.ConsumeIntegralInRange<uint8_t>(1, 5);
        bool ring = m.type == static_cast<uint8_t>(Ctrl::Ring);
        uint32_t keys[kRingSegments] = {};
        if (ring) {
            for (uint32_t &k : keys) k = in.ConsumeIntegral<uint32_t>();
            m.sent = in.ConsumeIntegral<uint64_t>();
        }
        m.credits = in.ConsumeIntegralInRange<uint32_t>(0, 80);
        uint64_t base = in.ConsumeBool() ? s.c->remote.consumed : s.c->remote.written;
        m.consumed = base + in.ConsumeIntegralInRange<int64_t>(-8, 8);
        if (!ring) m.sent = s.c->rx.tail + in.ConsumeIntegralInRange<int64_t>(-2, 2);
        if (ring) {
            WireRing w = ring_to_wire(m, keys);
            std::memcpy(buf, &w, sizeof w);
            len = sizeof w;
        } else {
            WireCtrl w = ctrl_to_wire(m);
            std::memcpy(buf, &w, sizeof w);
            len = sizeof w;
        }
    } else {
        std::vector<uint8_t> raw = in.ConsumeBytes<uint8_t>(kRecvBufSize);
        std::memset(buf, 0, kRecvBufSize);
        if (!raw.empty()) std::memcpy(buf, raw.data(), raw.size());
        len = in.ConsumeIntegralInRange<uint32_t>(0, kRecvBufSize);
    }
    ibv_wc wc{};
    wc.wr_id = make_wr_id(s.c->serial, WrKind::Recv, index);
    wc.opcode = IBV_WC_RECV;
    wc.byte_len = len;
    s.cq.push_back(wc);
    s.cq_seq.push_back(0);
}

void hostile_error(Side &s, FuzzedDataProvider &in)
{
    s.tainted = true;
    ibv_wc wc{};
    static const WrKind kinds[] = {WrKind::Recv, WrKind::Data, WrKind::Ctrl, WrKind::Fence};
    wc.wr_id = make_wr_id(s.c->serial, kinds[in.ConsumeIntegralInRange(0, 3)], 0);
    wc.status = static_cast<ibv_wc_status>(in.ConsumeIntegralInRange(1, 21));
    s.cq.push_back(wc);
    s.cq_seq.push_back(0);
}

/// Both ends read everything and the wire runs dry: whatever was accepted
/// arrives (bounded, so a livelock is reported rather than spun on).
void drain(Pair &p)
{
    for (int round = 0; round < 10000; ++round) {
        bool moved = false;
        for (Side *s : {&p.a, &p.b}) {
            size_t before = s->read_total;
            app_read(p, *s, 2 * s->c->rx.size, s->c->rx.size / 3);
            moved |= s->read_total != before;
            while (deliver_one(p, *s)) moved = true;
        }
        for (Side *s : {&p.a, &p.b})
            while (poll_one(p, *s)) moved = true;
        check_invariants(p);
        if (!moved) break;
    }
    bool honest = !p.a.tainted && !p.b.tainted;
    for (Side *s : {&p.a, &p.b}) {
        Side &o = peer_of(p, *s);
        if (!honest || s->c->error || o.c->error || s->qp_error || o.qp_error) continue;
        expect(s->c->tx.posted == s->c->tx.head, s->name, "accepted bytes still unsent after the drain (stall)");
        // (After shutdown(SHUT_RD) arriving bytes are dropped unread.)
        if (!o.c->rx.rd_shut) expect(o.read_total == s->written_total, o.name, "did not read everything written to it");
        if (s->c->tx.wr_shut) expect(o.c->rx.peer_eof, o.name, "no end-of-stream after the peer's shutdown");
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    // The error texts call ibv_wc_status_str, which the plugin resolves
    // from libibverbs.so.1 at init: do the same (no device is opened).
    std::string why;
    if (load_rdma_core(&why) != 0) {
        std::fprintf(stderr, "fuzz-rdma-datapath: %s\n", why.c_str());
        std::exit(1);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzedDataProvider in(data, size);
    Pair p;
    pair_init(p, pick_shape(in));
    check_invariants(p);
    for (int step = 0; step < 400 && in.remaining_bytes() > 0; ++step) {
        Side &s = in.ConsumeBool() ? p.a : p.b;
        switch (in.ConsumeIntegralInRange(0, 13)) {
        case 0:
        case 1: {
            size_t len = in.ConsumeIntegralInRange<size_t>(0, 3 * s.c->tx.size / 2);
            app_write(s, len, in.ConsumeIntegralInRange<size_t>(0, len));
            break;
        }
        case 2: {
            size_t len = in.ConsumeIntegralInRange<size_t>(1, 2 * s.c->rx.size);
            app_read(p, s, len, in.ConsumeIntegralInRange<size_t>(0, len));
            break;
        }
        case 3:
        case 4: {
            int n = in.ConsumeIntegralInRange(1, 8);
            for (int i = 0; i < n && deliver_one(p, s); ++i) {
            }
            break;
        }
        case 5:
        case 6: {
            int n = in.ConsumeIntegralInRange(1, 8);
            for (int i = 0; i < n && poll_one(p, s); ++i) {
            }
            break;
        }
        case 7: {
            size_t min_len = in.ConsumeIntegralInRange<size_t>(0, s.c->tx.size + 1);
            app_zero_copy_send(s, min_len, in.ConsumeIntegralInRange<size_t>(0, s.c->tx.size));
            break;
        }
        case 8:
            app_zero_copy_recv(p, s, in.ConsumeIntegralInRange<size_t>(0, 256));
            break;
        case 9: {
            static const int hows[] = {SHUT_WR, SHUT_RD, SHUT_RDWR, 99};
            conn_shutdown(s.c, hows[in.ConsumeIntegralInRange(0, 3)]);
            break;
        }
        case 10:
            // What conn_tick does for an idle connection.
            owe(s.c, kOweKeepalive);
            conn_pump(s.c);
            break;
        case 11:
            hostile_imm(s, in.ConsumeIntegral<uint32_t>(), in.ConsumeIntegralInRange<uint32_t>(0, 1 << 20));
            break;
        case 12:
            hostile_ctrl(s, in);
            break;
        case 13:
            hostile_error(s, in);
            break;
        }
        check_invariants(p);
    }
    drain(p);
    return 0;
}
