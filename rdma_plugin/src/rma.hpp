// SPDX-License-Identifier: MIT
// One-sided remote memory (ABI 1.3) over RDMA: exposures are type-2 memory
// windows bound to the connection's QP, rma_post is RDMA READ / WRITE.
// rma_expose.cpp: exposures, revocation, lent memory, close.
// rma_post.cpp: operations, splitting, completions.
#pragma once

#include "core.hpp"

#include <cstdint>
#include <deque>
#include <vector>

struct tw_rma_exposure {
    tw_conn *conn = nullptr;
    uint8_t *addr = nullptr;
    size_t len = 0;
    uint32_t access = 0;      ///< TW_RMA_*
    ibv_mr *own_mr = nullptr; ///< registered by expose (nullptr: inside lent memory)
    ibv_mr *mr = nullptr;     ///< the MR the window is bound over (own_mr or the lent memory's)
    ibv_mw *mw = nullptr;
    uint32_t rkey = 0; ///< the key of its one binding
    uint32_t id = 0;   ///< names it in wr_id
    bool revoking = false;
    tw_rma_cb revoke_cb = nullptr;
    void *revoke_arg = nullptr;
};

namespace twrdma {

/// What rma_expose writes (little endian, packed by hand): the initiator
/// needs address, key, length and access; the format is versioned.
struct RmaDesc {
    uint32_t magic = 0;  ///< kRmaMagic
    uint8_t version = 0; ///< kRmaDescVersion
    uint8_t access = 0;  ///< TW_RMA_*
    uint64_t addr = 0;
    uint64_t len = 0;
    uint32_t rkey = 0;
};
constexpr uint32_t kRmaMagic = 0x414d5754; // "TWMA"
constexpr uint8_t kRmaDescVersion = 1;
constexpr size_t kRmaDescLen = 28;
void rma_desc_write(const RmaDesc &d, void *out);
/// False when `len` or the magic/version do not match.
bool rma_desc_read(const void *in, size_t len, RmaDesc *out);

/// Memory lent by rma_mem_get: registered once, at get time.
struct RmaLent {
    uint8_t *data = nullptr;
    size_t len = 0;
    ibv_mr *mr = nullptr;
};

/// One work request of an operation (in send-queue order).
struct RmaPiece {
    uint32_t op; ///< index into RmaConn::ops
    uint64_t bytes;
    uint8_t *bounce_to;   ///< READ through staging: copy here on completion
    uint8_t *bounce_from; ///< ... from here
    uint64_t staging_end; ///< staging bytes freed by its completion
    bool read;
    uint64_t wr_seq = 0; ///< the connection's sq.wr_posted after it: done once sq.wr_done reaches it
};

struct RmaOp {
    bool live = false;
    bool read = false;
    bool cancelled = false; ///< close: no callback, no copy
    bool direct = false;    ///< the device reads/writes `local` itself
    uint8_t *local = nullptr;
    uint32_t lkey = 0;
    uint64_t remote = 0;
    uint32_t rkey = 0;
    uint64_t len = 0;
    uint64_t posted = 0; ///< bytes handed to the device
    uint64_t done = 0;   ///< bytes completed
    tw_rma_cb cb = nullptr;
    void *arg = nullptr;
    int status = 0;
};

struct RmaCompletion {
    tw_rma_cb cb;
    void *arg;
    int status;
    tw_rma_exposure *exposure; ///< a revocation's: freed after its callback
};

struct RmaConn {
    std::vector<tw_rma_exposure *> exposures;
    std::vector<RmaLent> lent;
    std::vector<RmaOp> ops;                           ///< slots; index goes into wr_id
    std::deque<uint32_t> waiting;                     ///< ops with bytes not yet posted, FIFO
    std::deque<RmaPiece> in_flight;                   ///< posted pieces, send-queue order
    std::deque<tw_rma_exposure *> bind_waiting;       ///< exposed, BIND_MW not posted yet, FIFO
    std::deque<tw_rma_exposure *> invalidate_waiting; ///< revoked, LOCAL_INV not posted yet
    std::deque<tw_rma_exposure *> invalidating;       ///< LOCAL_INV posted, FIFO
    std::vector<RmaCompletion> completions;           ///< to run from the loop
    uint32_t next_exposure_id = 1;
    bool delivering = false; ///< callbacks running: rma_post queues, one pump after them
    uint32_t reads_in_flight = 0;
    uint32_t read_limit = 0;   ///< QP's initiator depth
    uint64_t max_transfer = 0; ///< bytes per work request
    // staging for local memory that is not registered (a bounce, FIFO ring)
    uint8_t *staging = nullptr;
    ibv_mr *staging_mr = nullptr;
    uint64_t staging_size = 0;
    uint64_t staging_head = 0, staging_tail = 0;
};

/// Operations one connection keeps open at most (then -EAGAIN).
constexpr uint32_t kRmaMaxOps = 64;
/// Staging for unregistered local memory, registered on first need.
constexpr uint64_t kRmaStagingSize = 4u << 20;

RmaConn &rma_state(tw_conn *c);

// rma_expose.cpp
int rma_expose(tw_conn *c, void *addr, size_t len, uint32_t access, tw_rma_exposure **out, void *desc,
               size_t *desc_len);
int rma_revoke(tw_rma_exposure *e, tw_rma_cb cb, void *arg);
int rma_mem_get(tw_conn *c, size_t len, tw_buf *out);
int rma_mem_put(tw_conn *c, tw_buf *buf);
/// Post the BIND_MWs of new exposures, once the remote operations before
/// them completed (window_ops_allowed): the window is bound before anything
/// posted after rma_expose.
void rma_post_binds(tw_conn *c);
/// Post the LOCAL_INVs of revoked exposures the send queue has room for,
/// once the remote operations before them completed (window_ops_allowed).
void rma_post_invalidations(tw_conn *c);
/// Deallocate every window of the connection (before its QP is destroyed).
void rma_drop_windows(tw_conn *c);
/// LOCAL_INV of an exposure completed.
void rma_on_invalidated(tw_conn *c);
/// close(): withdraw every window, cancel operations.  True when the
/// device may still move bytes of application memory: reset, do not linger.
bool rma_on_close(tw_conn *c);
/// The connection failed: operations in flight complete with its error.
void rma_on_fail(tw_conn *c);
/// Free everything (connection deleted; the QP is gone).
void rma_release(tw_conn *c);
/// The connection's device is going (after rma_on_fail): deregister what
/// the connection registered on it; lent memory stays until rma_mem_put.
void rma_forget_device(tw_conn *c);
/// The lkey of [p, p + len) when it lies in lent memory or an exposure of
/// this connection (`writable`: the device will write it); 0 when not.
uint32_t rma_local_lkey(tw_conn *c, const void *p, size_t len, bool writable);

// rma_post.cpp
int rma_post(tw_conn *c, const tw_rma_request *req);
/// Post what waits, as far as the send queue and the READ limit allow.
void rma_pump(tw_conn *c);
/// A signalled send completion moved sq.wr_done: every piece posted up to it is
/// done (pieces are signalled selectively; the SQ completes in order).
void rma_on_send_done(tw_conn *c);
/// A failed one: records the operation's status (-TW_EREMOTEACCESS for a
/// refusal, else 0: the connection's error) and returns it.
int rma_wc_status(tw_conn *c, const ibv_wc &wc);
/// "RDMA_READ (rma_post)" or "RDMA_WRITE (rma_post)" for a failed WC.
const char *rma_wc_what(tw_conn *c, const ibv_wc &wc);
/// CM conn params: RDMA READs this end may have outstanding / serve.
uint8_t rma_initiator_depth(const Device *dev);
uint8_t rma_responder_resources(const Device *dev);
bool rma_has_completions(const tw_conn *c);
/// RDMA READ / WRITE pieces posted and not completed.
bool rma_in_flight(const tw_conn *c);
/// Run queued callbacks (from the loop, never with the host closed).
void rma_run_completions(tw_conn *c);
/// Free SQ entries of the connection (shared with the stream).
uint32_t rma_sq_free(const tw_conn *c);

} // namespace twrdma
