// SPDX-License-Identifier: MIT
// rma_post: RDMA READ / WRITE between `local` and the peer's exposure,
// split to the port's max_msg_sz (or rdma.rma_max_transfer), sharing the
// send queue with the stream (every piece is a counted WR; only the last of
// a burst is signalled, and any signalled completion finishes the pieces
// posted before it: a send queue completes in order).
// Local memory that is lent (rma_mem_get) or inside one of this
// connection's exposures is used in place with its lkey; any other memory
// bounces through a staging area registered once per connection, so no
// registration ever happens per operation.
#include "rma.hpp"

#include "report.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace twrdma {

namespace {

/// The largest work request: the port's max_msg_sz, or the configured cap.
uint64_t max_transfer(tw_conn *c)
{
    ibv_port_attr pa{};
    uint64_t max = 1u << 30;
    if (ibv_query_port(c->res.id->verbs, c->res.id->port_num, &pa) == 0 && pa.max_msg_sz) max = pa.max_msg_sz;
    uint64_t cap = c->loop->t->cfg.rma_max_transfer;
    return cap ? std::min(cap, max) : max;
}

int ensure_staging(tw_conn *c, RmaConn &r)
{
    if (r.staging_mr) return 0;
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void *p = nullptr;
    if (posix_memalign(&p, page, kRmaStagingSize) != 0) return -ENOMEM;
    r.staging_mr = ibv_reg_mr(c->res.ldev->dev->pd, p, kRmaStagingSize, IBV_ACCESS_LOCAL_WRITE);
    if (!r.staging_mr) {
        int err = errno ? errno : ENOMEM;
        std::free(p);
        c->last_error = call_failed("ibv_reg_mr (rma staging)", err,
                                    "RLIMIT_MEMLOCK too low (ulimit -l); or use memory from rma_mem_get as `local`");
        return err == ENOMEM || err == EPERM ? -TW_EMEMLOCK : -ENOMEM;
    }
    r.staging = static_cast<uint8_t *>(p);
    r.staging_size = kRmaStagingSize;
    return 0;
}

int free_slot(RmaConn &r)
{
    for (size_t i = 0; i < r.ops.size(); ++i)
        if (!r.ops[i].live) return static_cast<int>(i);
    if (r.ops.size() >= kRmaMaxOps) return -1;
    r.ops.emplace_back();
    return static_cast<int>(r.ops.size() - 1);
}

/// Whether the piece about to be posted may be the last for a while: then it
/// must be signalled, or nothing would ever report the burst done. The pump
/// stops when the queue empties, at the READ limit or when the SQ runs low;
/// bounced pieces are always signalled (their staging is freed per piece).
bool ends_burst(const tw_conn *c, const RmaConn &r, const RmaOp &op, uint64_t bytes)
{
    if (!op.direct) return true;
    if (op.posted + bytes == op.len && r.waiting.size() == 1) return true;
    if (op.read && r.reads_in_flight + 1 >= r.read_limit) return true;
    return rma_sq_free(c) <= 3;
}

/// Post one piece of `op`; false when nothing could be posted now.
bool post_piece(tw_conn *c, RmaConn &r, uint32_t index)
{
    RmaOp &op = r.ops[index];
    uint64_t bytes = std::min(op.len - op.posted, r.max_transfer);
    RmaPiece piece{index, 0, nullptr, nullptr, 0, op.read};
    ibv_sge sge{};
    if (op.direct) {
        sge.addr = reinterpret_cast<uint64_t>(op.local + op.posted);
        sge.lkey = op.lkey;
        piece.staging_end = r.staging_head;
    } else {
        uint64_t off = r.staging_head % r.staging_size;
        uint64_t used = r.staging_head - r.staging_tail;
        uint64_t room = std::min(r.staging_size - off, r.staging_size - used);
        if (room < std::min<uint64_t>(bytes, 4096) && room < r.staging_size - used) {
            // Too little before the end: skip to the start (FIFO ring).
            r.staging_head += r.staging_size - off;
            off = 0;
            used = r.staging_head - r.staging_tail;
            room = std::min(r.staging_size, r.staging_size - used);
        }
        if (room == 0) return false;
        bytes = std::min(bytes, room);
        uint8_t *stage = r.staging + off;
        if (op.read) {
            piece.bounce_from = stage;
            piece.bounce_to = op.local + op.posted;
        } else {
            std::memcpy(stage, op.local + op.posted, bytes);
        }
        r.staging_head += bytes;
        piece.staging_end = r.staging_head;
        sge.addr = reinterpret_cast<uint64_t>(stage);
        sge.lkey = r.staging_mr->lkey;
    }
    sge.length = static_cast<uint32_t>(bytes);
    piece.bytes = bytes;
    ibv_send_wr wr{};
    wr.wr_id = make_wr_id(c->serial, WrKind::Rma, index);
    wr.opcode = op.read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.rdma.remote_addr = op.remote + op.posted;
    wr.wr.rdma.rkey = op.rkey;
    bool signal = ends_burst(c, r, op, bytes);
    if (!post_chain(c, &wr, &wr, 1, signal)) return false;
    piece.wr_seq = c->sq.wr_posted;
    r.in_flight.push_back(piece);
    op.posted += bytes;
    if (op.read) r.reads_in_flight += 1;
    return true;
}

} // namespace

uint32_t rma_sq_free(const tw_conn *c) { return sq_free(c); }

int rma_post(tw_conn *c, const tw_rma_request *req)
{
    if (!req || req->size < TW_RMA_REQUEST_SIZE_V1 || !req->cb || req->len == 0 || !req->local || req->flags ||
        (req->op != TW_RMA_OP_READ && req->op != TW_RMA_OP_WRITE))
        return -EINVAL;
    RmaDesc d;
    if (!rma_desc_read(req->desc, req->desc_len, &d)) {
        c->last_error = "rma_post: the descriptor was not written by the rdma transport's rma_expose (length, "
                        "magic or format version)";
        return -EINVAL;
    }
    if (req->offset > d.len || req->len > d.len - req->offset) {
        c->last_error = format("rma_post: %zu bytes at offset %llu are outside the exposure's %llu bytes", req->len,
                               static_cast<unsigned long long>(req->offset), static_cast<unsigned long long>(d.len));
        return -EINVAL;
    }
    bool read = req->op == TW_RMA_OP_READ;
    if (!(d.access & (read ? TW_RMA_READ : TW_RMA_WRITE))) {
        c->last_error = format("rma_post: the exposure was not exposed for %s", read ? "reading" : "writing");
        return -TW_EREMOTEACCESS;
    }
    if (c->state != ConnState::Established || c->error || reached(c, kDisconnected) || !c->res.qp ||
        reached(c, kHostClosed))
        return -ENOTCONN;
    RmaConn &r = rma_state(c);
    if (!r.max_transfer) {
        r.max_transfer = max_transfer(c);
        r.read_limit = std::max<uint32_t>(1, rma_initiator_depth(c->res.ldev->dev));
    }
    // Backpressure: at most kRmaMaxOps open; the rest waits for the SQ,
    // the READ limit or staging in rma_pump.
    int slot = free_slot(r);
    if (slot < 0) {
        c->stats.write_would_block += 1;
        return -EAGAIN;
    }
    RmaOp &op = r.ops[static_cast<size_t>(slot)];
    op = RmaOp{};
    op.read = read;
    op.local = static_cast<uint8_t *>(req->local);
    op.lkey = rma_local_lkey(c, req->local, req->len, read);
    op.direct = op.lkey != 0;
    if (!op.direct) {
        int rc = ensure_staging(c, r);
        if (rc) return rc;
    }
    op.remote = d.addr + req->offset;
    op.rkey = d.rkey;
    op.len = req->len;
    op.cb = req->cb;
    op.arg = req->arg;
    op.live = true;
    r.waiting.push_back(static_cast<uint32_t>(slot));
    rma_pump(c);
    return 0;
}

void rma_pump(tw_conn *c)
{
    // While callbacks run, their rma_post calls only queue: one pump after
    // them posts the whole burst with one signalled work request.
    if (!c->rma || c->rma->delivering || c->state != ConnState::Established || c->error || !c->res.qp) return;
    RmaConn &r = *c->rma;
    rma_post_invalidations(c);
    if (c->sq.window_wait) return; // window operations go first
    bool had_waiting = !r.waiting.empty();
    // Three SQ entries stay for the stream's control messages.
    while (!r.waiting.empty() && rma_sq_free(c) >= 3 && !c->error) {
        RmaOp &op = r.ops[r.waiting.front()];
        if (op.read && r.reads_in_flight >= r.read_limit) break;
        if (!post_piece(c, r, r.waiting.front())) break;
        if (op.posted == op.len) r.waiting.pop_front();
    }
    if (had_waiting && r.waiting.empty()) mark_ready(c); // room for rma_post again
}

void rma_on_send_done(tw_conn *c)
{
    if (!c->rma) return;
    RmaConn &r = *c->rma;
    while (!r.in_flight.empty() && r.in_flight.front().wr_seq <= c->sq.wr_done) {
        RmaPiece piece = r.in_flight.front();
        r.in_flight.pop_front();
        if (piece.read) r.reads_in_flight -= 1;
        RmaOp &op = r.ops[piece.op];
        if (piece.bounce_to && !op.cancelled) std::memcpy(piece.bounce_to, piece.bounce_from, piece.bytes);
        r.staging_tail = std::max(r.staging_tail, piece.staging_end);
        op.done += piece.bytes;
        if (op.done == op.len && op.live) {
            op.live = false;
            if (!op.cancelled) {
                r.completions.push_back(RmaCompletion{op.cb, op.arg, 0, nullptr});
                mark_ready(c);
            }
        }
    }
}

int rma_wc_status(tw_conn *c, const ibv_wc &wc)
{
    if (!c->rma) return 0;
    uint32_t index = static_cast<uint32_t>(wc.wr_id & 0xffffff);
    if (index >= c->rma->ops.size()) return 0;
    RmaOp &op = c->rma->ops[index];
    if (wc.status == IBV_WC_REM_ACCESS_ERR || wc.status == IBV_WC_REM_INV_REQ_ERR) op.status = -TW_EREMOTEACCESS;
    return op.status;
}

const char *rma_wc_what(tw_conn *c, const ibv_wc &wc)
{
    uint32_t index = static_cast<uint32_t>(wc.wr_id & 0xffffff);
    if (c->rma && index < c->rma->ops.size() && c->rma->ops[index].read) return "RDMA_READ (rma_post)";
    return "RDMA_WRITE (rma_post)";
}

uint8_t rma_initiator_depth(const Device *dev)
{
    return static_cast<uint8_t>(std::min(dev->attr.max_qp_init_rd_atom, 255));
}

uint8_t rma_responder_resources(const Device *dev)
{
    return static_cast<uint8_t>(std::min(dev->attr.max_qp_rd_atom, 255));
}

} // namespace twrdma
