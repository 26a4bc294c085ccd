// SPDX-License-Identifier: MIT
// A buffered connection over any transport, driven by its loop.
#pragma once

#include <twinwire/export.hpp>

#include <twinwire/buffer.hpp>
#include <twinwire/error.hpp>
#include <twinwire/rma.hpp>
#include <twinwire/transport.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace twinwire {

class Loop;
class Timer;
class Transport;
struct ConnectionAccess;
namespace rma {
class Link;
class Native;
} // namespace rma

/// Why a connection ended.
struct TW_API CloseInfo {
    int error = 0;        ///< 0 for a clean end, else a negative errno / TW_E* code
    std::string reason;   ///< one line: "peer closed", "read: Connection reset by peer", ...
    bool by_peer = false; ///< true when the peer ended it (EOF, reset, dead)
    /// What to branch on: errc::closed_locally (close(), the runtime
    /// stopping), errc::aborted (abort()), errc::peer_closed (end of
    /// stream), errc::peer_reset, errc::timed_out (after close(), the
    /// peer took no output for shutdown_timeout_ms; a dead peer; a
    /// read/write/idle timeout), errc::record_too_long (read_until's
    /// maximum), errc::callback_threw, errc::transport_error,
    /// errc::protocol_mismatch (RMA enabled on one end only), or
    /// for a connect that failed its handshake the connect codes.
    std::error_code code;
};

/**
 * A connection: an input buffer filled from the transport, an output buffer
 * flushed to it, and four callbacks, all run on the connection's loop.
 *
 * Lifetime: the framework keeps the connection alive while it is open; the
 * handlers may close it (close() or abort()) from inside any callback.  A
 * ConnectionPtr kept by the application stays valid after the close (its
 * calls then do nothing and return false).  Use it only on its loop's thread.
 *
 * End of stream from the peer (it half-closed, or closed after sending): a
 * peer's end-of-stream never closes the connection under the application.
 * Everything the peer sent is delivered to on_data first; then reading stops,
 * peer_closed() turns true and on_eof runs.  With an on_eof handler the
 * connection stays open for writing (replies deferred to a timer or a later
 * loop turn still go out) until the application calls close() - which
 * flushes what is queued - or abort().  Without one, the connection closes
 * once the output queued so far has been written, so an application that
 * answers later than inside on_data must set on_eof.
 *
 * Reading records: read_until() and read_exactly() ask for the next record
 * (one request at a time, one-shot like asio's async_read_until: call again
 * from the handler for the next).  While a request waits, on_data does not
 * run; the bytes after a record stay buffered for the next request, or go to
 * on_data when none is made.  A delimiter not found within max_bytes closes
 * the connection with errc::record_too_long (error -EMSGSIZE) and a reason
 * naming the limit (the
 * output queued so far is still flushed).
 *
 * Watermarks: output above the high watermark makes write_blocked() true
 * (writes still succeed up to write_buffer_limit); once it falls back to the
 * low watermark, on_write_low runs.  on_drain still means "output empty".
 *
 * Timeouts (0: off; defaults from read_timeout_ms, write_timeout_ms,
 * idle_timeout_ms): no byte received for the read timeout while reading is
 * on, queued output that makes no progress for the write timeout, or no
 * traffic either way for the idle timeout close the connection with
 * errc::timed_out (error -ETIMEDOUT), the queued output dropped, and a
 * reason naming the timeout.
 *
 * Exceptions: one escaping a callback (on_data, on_eof, on_drain, the accept
 * or connect handler) ends that connection only - logged at ERROR with the
 * exception's text, its on_close told why (code errc::callback_threw, error
 * -ECONNABORTED) - and the loop keeps serving the others; one escaping
 * on_close is logged.
 */
class TW_API Connection : public std::enable_shared_from_this<Connection> {
public:
    /// New bytes arrived: `input` holds everything not yet drained.  Consume
    /// what you can (drain/take) and leave the rest for the next call.
    using DataHandler = std::function<void(Connection &, Buffer &input)>;
    /// The connection ended; runs once, and nothing runs after it.
    using CloseHandler = std::function<void(Connection &, const CloseInfo &)>;
    /// The output buffer became empty (everything handed to the transport).
    using DrainHandler = std::function<void(Connection &)>;
    /// The peer ended its side (after every byte it sent went to on_data).
    /// The connection stays writable; close() it when the answers are queued.
    using EofHandler = std::function<void(Connection &)>;
    /// One record from read_until / read_exactly (the delimiter included).
    using RecordHandler = std::function<void(Connection &, std::string record)>;
    /// Bytes lent in place by the transport (valid during the call, until the
    /// handler closes the connection): return how many were used; the rest is
    /// read again (see on_borrowed_data).
    using BorrowedDataHandler = std::function<size_t(Connection &, const char *data, size_t len)>;
    /// Fill a lent send buffer of `cap` bytes; return how many bytes to send.
    using FillHandler = std::function<size_t(char *data, size_t cap)>;

    ~Connection();
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    void on_data(DataHandler handler);
    void on_close(CloseHandler handler);
    void on_drain(DrainHandler handler);
    void on_eof(EofHandler handler);
    /// The output fell to the low watermark after going above the high one.
    void on_write_low(DrainHandler handler);

    /// Zero-copy reading: borrow the transport's receive buffers
    /// (recv_buf_borrow) and hand them to `handler` in place instead of
    /// copying into the input buffer.  Bytes the handler leaves (a record
    /// split across buffers) are read into the input buffer and go to
    /// on_data, as do the bytes after them, until the input is empty again;
    /// a read_until / read_exactly request is served from the input buffer.
    /// A transport that lends nothing (-EOPNOTSUPP) is read by copying from
    /// then on, and borrowing() turns false.
    void on_borrowed_data(BorrowedDataHandler handler);
    /// A borrowed-data handler is set and the transport has not refused it.
    bool borrowing() const { return static_cast<bool>(on_borrowed_) && !borrow_refused_ && !rma_; }

    /// Deliver the input up to and including the next `delimiter` (not
    /// empty) to `handler`, once.  More than `max_bytes` (delimiter
    /// included) without it: the connection closes with -EMSGSIZE.
    void read_until(std::string delimiter, size_t max_bytes, RecordHandler handler);
    /// Deliver exactly the next `n` bytes (n > 0) to `handler`, once.
    void read_exactly(size_t n, RecordHandler handler);

    /// Queue bytes and send as much as the transport takes now.  Returns
    /// false (and queues nothing) when the connection is closed or the
    /// queued output would exceed write_buffer_limit.
    bool write(const void *data, size_t len);
    bool write(std::string_view text) { return write(text.data(), text.size()); }
    /// Move a whole buffer to the output (no copy of its bytes).
    bool write(Buffer &data);
    /// Zero-copy writing: with no output queued, lend a transport send
    /// buffer of at least `min_len` bytes (send_buf_get) to `fill`, then
    /// send what it wrote (send_buf_submit), in stream order.  Returns the
    /// bytes sent, or without running `fill` a negative code: -EAGAIN (no
    /// buffer free now: on_drain runs when the transport takes more), -EBUSY
    /// (output is queued: write() keeps the order), -EOPNOTSUPP (the
    /// transport lends none), -EMSGSIZE (min_len too large), -ENOTCONN (the
    /// connection is closing or ended: is_open() is false), or the
    /// transport's error for a buffer it could not lend.  When sending what
    /// `fill` wrote fails, the connection ends (is_open() turns false,
    /// on_close follows) and the transport's negative code (-ECONNRESET,
    /// -EPIPE, ...) is returned: a loop feeding write_lent must stop on any
    /// result <= 0 that it does not wait on (-EAGAIN) or copy for (-EBUSY).
    ssize_t write_lent(size_t min_len, const FillHandler &fill);

    /// Output queued above the high watermark (see the class comment).
    bool write_blocked() const { return write_blocked_; }
    /// Per-connection watermarks; false (nothing changed) unless
    /// low < high <= write_buffer_limit.
    bool set_write_watermarks(size_t low, size_t high);

    /// Per-connection timeouts (zero: off); each counts from this call.
    void set_read_timeout(std::chrono::milliseconds timeout);
    void set_write_timeout(std::chrono::milliseconds timeout);
    void set_idle_timeout(std::chrono::milliseconds timeout);

    /// Send end-of-stream after the queued output (half-close); reading goes on.
    void shutdown_write();
    /// Flush the queued output, then close.  A peer that reads slowly gets
    /// all of it; one that takes nothing for shutdown_timeout_ms is cut off.
    /// No on_data runs after this call; on_close runs when it is done.
    void close();
    /// Close now and drop the queued output.
    void abort();

    /// Stop / restart reading (backpressure from the application).
    void pause_reading();
    void resume_reading();

    bool is_open() const;
    /// The peer sent end-of-stream (see the class comment).
    bool peer_closed() const;
    size_t output_queued() const;
    uint64_t id() const { return id_; }
    Loop &loop() const { return *loop_; }
    /// "tcp" or "rdma".
    const std::string &transport_name() const;
    /// For a client connection that wanted RDMA and runs over TCP: why.
    const std::string &fallback_reason() const { return fallback_reason_; }
    std::string peer_address() const; ///< "10.0.0.1:6379", "[::1]:6379"
    std::string local_address() const;
    /// The transport's counters for this connection (zeros when closed).
    tw_conn_stats stats() const;
    /// One of the transport's own ctrl() operations on this connection, in
    /// its namespace (e.g. "rdma", TW_RDMA_CTRL_GET_RINGS from
    /// <twinwire/rdma.h>): the transport's result; -EOPNOTSUPP from another
    /// transport, -ENOTCONN once closed.  On the connection's loop thread.
    int transport_ctrl(const char *ns, uint32_t op, void *data, size_t len) const;

    /// Attach application state.
    void set_context(std::shared_ptr<void> context) { context_ = std::move(context); }
    template <class T> T *context() const { return static_cast<T *>(context_.get()); }

    /// One-sided remote memory (docs/rma.md).  Enable it on BOTH ends first
    /// thing in the accept and connect handlers, before any byte is written
    /// or read: on a transport without native RMA the stream is then framed
    /// (a peer that did not enable it ends the connection with
    /// errc::protocol_mismatch).  False, with why, when it is too late, the
    /// connection is not open, or it was enabled before.
    bool enable_rma(std::string *why = nullptr);
    bool rma_enabled() const { return rma_ || native_; }
    /// RMA is done by the transport itself (TW_CAP_RMA), not the emulation.
    bool rma_native() const { return static_cast<bool>(native_); }
    /// Expose [data, data + len) to this connection's peer for `access`.
    /// nullptr, with why, when RMA is not enabled, the connection is not
    /// open, or len is 0.  See RmaExposure for the memory's lifetime.
    RmaExposurePtr expose(void *data, size_t len, RmaAccess access, std::string *why = nullptr);
    /// `len` bytes of memory to expose or to use as `local`, lent by the
    /// transport where it can (see RmaMemory), else from the heap.  nullptr,
    /// with why, when RMA is not enabled or the connection is not open.
    RmaMemoryPtr rma_memory(size_t len, std::string *why = nullptr);
    /// Read `len` bytes at `offset` of the peer's exposure named by
    /// `descriptor` into `local` (valid until `done` runs).  An empty code:
    /// `done` runs later on this loop with the outcome.  Otherwise nothing
    /// started and `done` never runs: errc::rma_unavailable,
    /// std::errc::invalid_argument (not a descriptor, len 0, past its end),
    /// errc::remote_access_refused (a mode the descriptor does not allow),
    /// std::errc::resource_unavailable_try_again (too many in flight),
    /// errc::closed_locally (the connection is closing or closed).
    std::error_code rma_read(std::string_view descriptor, uint64_t offset, void *local, size_t len, RmaCallback done,
                             std::string *why = nullptr);
    /// Write `len` bytes of `local` (valid until `done` runs) at `offset` of
    /// the peer's exposure; as rma_read.
    std::error_code rma_write(std::string_view descriptor, uint64_t offset, const void *local, size_t len,
                              RmaCallback done, std::string *why = nullptr);

    /// The raw transport connection, for the zero-copy API (nullptr when closed).
    tw_conn *raw() const { return conn_; }
    const tw_transport_ops &ops() const;

private:
    friend struct ConnectionAccess;
    friend class RmaExposure;
    friend class RmaMemory;
    struct Settings {
        size_t read_size;
        size_t write_limit;
        uint32_t linger_ms;
        size_t write_low;
        size_t write_high;
        uint32_t read_timeout_ms;
        uint32_t write_timeout_ms;
        uint32_t idle_timeout_ms;
    };
    struct ReadRequest {
        std::string delimiter; ///< empty: exactly `count` bytes
        size_t count = 0;      ///< read_exactly: the size; read_until: the maximum
        size_t searched = 0;   ///< bytes already searched for the delimiter
        RecordHandler handler;
    };
    using Established = std::function<void(const std::shared_ptr<Connection> &, int error, const std::string &why)>;

    Connection(Loop &loop, Transport &transport, tw_conn *conn, uint64_t id, Settings settings);

    static void on_event(tw_conn *conn, uint32_t events, void *arg);
    void handle_read();
    ssize_t read_into(Buffer &target, size_t *reserved);
    /// Serve a read event by borrowing; false when the rest must be copied.
    bool read_borrowed();
    /// Return a buffer still borrowed (the handler closed the connection).
    void give_back_borrowed();
    /// Hand the input to the pending read request(s), then on_data.
    /// Returns false when a callback threw (the connection is finished).
    bool deliver_input();
    /// 0 when the request cannot be served yet, else the record's size;
    /// -1 after closing the connection for an over-long record.
    ssize_t record_ready(ReadRequest &req);
    void set_request(ReadRequest req);
    void queued_output_changed();
    void note_read();
    void note_write_progress();
    void arm_timeouts();
    void check_timeouts();
    void peer_ended();
    void close_after_eof();
    void write_failed(int err, bool defer_callback);
    template <class F> bool guarded(const char *callback, F &&f);
    void callback_failed(const char *callback, const char *what);
    void run_close_callback(const CloseHandler &cb, const CloseInfo &info);
    void flush();
    /// writev the first chunks of `buf` to the transport (no drain).
    ssize_t writev_chunks(evbuffer *buf);
    size_t reserve_size();
    void adapt_reserve(size_t got, size_t reserved);
    void finish(std::error_code code, int error, std::string reason, bool by_peer, bool defer_callback);
    void update_interest();
    void release_handlers();
    std::string error_text(const char *call, int err) const;
    /// Write output_ until the transport takes no more: 0 or the error.
    int write_queued();
    /// Write what output_ holds (RMA chunks pumped in as it drains) without
    /// running callbacks; asks for TW_EV_WRITE for the rest.
    void push_output();
    /// After a read with RMA on: frames to input_, RMA answered, callbacks
    /// run.  False when the connection finished.
    bool rma_after_read();
    void run_rma_completions();
    std::error_code rma_post(uint32_t op, std::string_view descriptor, uint64_t offset, void *local, size_t len,
                             RmaCallback done, std::string *why);
    bool rma_revoke(uint64_t id, std::function<void()> done);
    bool rma_exposed(uint64_t id) const;
    struct CallbackScope {
        explicit CallbackScope(Connection &c);
        ~CallbackScope();
        Connection &conn;
    };

    Loop *loop_;
    Transport *transport_;
    tw_conn *conn_;
    uint64_t id_;
    Settings settings_;
    Buffer input_;
    Buffer output_;
    DataHandler on_data_;
    CloseHandler on_close_;
    DrainHandler on_drain_;
    EofHandler on_eof_;
    DrainHandler on_write_low_;
    BorrowedDataHandler on_borrowed_;
    bool borrow_refused_ = false; ///< recv_buf_borrow said -EOPNOTSUPP
    tw_buf *borrowed_ = nullptr;  ///< the buffer on_borrowed_ is reading, if any
    std::unique_ptr<ReadRequest> request_;
    std::unique_ptr<Timer> timeout_timer_;
    uint64_t last_read_ns_ = 0;
    uint64_t last_write_ns_ = 0;
    uint64_t write_progress_ = 0;       ///< counts writes that moved bytes (close()'s stall check)
    uint64_t linger_progress_seen_ = 0; ///< write_progress_ when the linger timer last looked
    bool write_blocked_ = false;
    bool delivering_ = false;
    Established on_established_;                    ///< handshake outcome (framework)
    const char *established_handler_ = "";          ///< "accept handler" or "connect handler", for the log
    std::function<void(Connection &)> on_finished_; ///< unregisters (framework)
    std::shared_ptr<void> context_;
    std::string fallback_reason_;
    std::shared_ptr<Connection> self_; ///< keeps an open connection alive
    std::unique_ptr<Timer> linger_timer_;
    bool established_ = false;
    bool reading_ = true;
    bool peer_eof_ = false;
    bool closing_ = false;
    bool shut_pending_ = false;
    bool write_shut_ = false;
    bool finished_ = false;
    bool want_write_ = false;
    bool release_pending_ = false;
    int callback_depth_ = 0;
    size_t reserve_ = 0;                  ///< bytes the next read reserves (adapts to what reads bring)
    bool read_any_ = false;               ///< a byte was read (enable_rma must come before)
    std::unique_ptr<rma::Link> rma_;      ///< the RMA emulation, once enabled
    std::unique_ptr<rma::Native> native_; ///< or the transport's own RMA (TW_CAP_RMA)
};

using ConnectionPtr = std::shared_ptr<Connection>;

} // namespace twinwire
