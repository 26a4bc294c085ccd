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
    bool borrowing() const;

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
    bool write_blocked() const;
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
    uint64_t id() const;
    Loop &loop() const;
    /// "tcp" or "rdma".
    const std::string &transport_name() const;
    /// For a client connection that wanted RDMA and runs over TCP: why.
    const std::string &fallback_reason() const;
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
    void set_context(std::shared_ptr<void> context);
    template <class T> T *context() const { return static_cast<T *>(context_pointer()); }

    /// One-sided remote memory (docs/rma.md).  Enable it on BOTH ends first
    /// thing in the accept and connect handlers, before any byte is written
    /// or read: on a transport without native RMA the stream is then framed
    /// (a peer that did not enable it ends the connection with
    /// errc::protocol_mismatch).  False, with why, when it is too late, the
    /// connection is not open, or it was enabled before.
    bool enable_rma(std::string *why = nullptr);
    bool rma_enabled() const;
    /// RMA is done by the transport itself (TW_CAP_RMA), not the emulation.
    bool rma_native() const;
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
    tw_conn *raw() const;
    const tw_transport_ops &ops() const;

private:
    friend struct ConnectionAccess;
    friend class RmaExposure;
    friend class RmaMemory;
    /// The connection's state and the code that drives it (framework/src/connection_impl.hpp).
    struct Impl;

    explicit Connection(std::unique_ptr<Impl> impl);
    void *context_pointer() const;

    std::unique_ptr<Impl> impl_;
};

using ConnectionPtr = std::shared_ptr<Connection>;

} // namespace twinwire
