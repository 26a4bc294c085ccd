// SPDX-License-Identifier: MIT
// A connection's state and the code that drives it (connection*.cpp), kept
// out of the installed header: none of it is libtwinwire's ABI, and none of
// it is exported (hidden, though Connection itself is TW_API).
#pragma once

#include "connection_access.hpp"

#include <twinwire/connection.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

struct evbuffer;

namespace twinwire {

namespace rma {
class Link;
class Native;
} // namespace rma

/// Where a connection is in its life.  It only ever moves down this list
/// (some steps skipped: a close() while connecting ends it at once).
enum class Phase : uint8_t {
    connecting, ///< the transport's handshake is under way: nothing read or written yet
    open,       ///< reading and writing
    write_shut, ///< shutdown_write(), or the peer closed while output was due: no more writes, reading goes on
    closing,    ///< close(), or the peer's end without on_eof: no more reads; the queued output drains, then it ends
    finished,   ///< ended: on_close has run or is posted, and nothing else happens
};

/// Who ended a connection: CloseInfo::by_peer.
enum class EndedBy { us, peer };

/// When on_close runs: now, or posted to the loop (never inside the
/// application's own close(), abort(), write(), ...).
enum class OnClose { run_now, post_to_loop };

struct __attribute__((visibility("hidden"))) Connection::Impl {
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

    /// The phase, and the questions the code asks of it.
    struct Lifecycle {
        Phase phase = Phase::connecting;

        /// The phase only moves forward: a later one is kept.  (No assert:
        /// its file name would put the build path into the library.)
        void enter(Phase next)
        {
            if (next > phase) phase = next;
        }
        /// The handshake is still under way.
        bool connecting() const { return phase == Phase::connecting; }
        /// Handshake done, not ended: the timeouts run.
        bool established() const { return phase != Phase::connecting && phase != Phase::finished; }
        /// Connection::is_open(): established, and neither closing nor ended.
        bool is_open() const { return phase == Phase::open || phase == Phase::write_shut; }
        /// write() and friends are taken.
        bool can_write() const { return phase == Phase::open; }
        /// Closing or ended: nothing more is read, and the application writes no more.
        bool finishing() const { return phase >= Phase::closing; }
        bool finished() const { return phase == Phase::finished; }
    };

    struct ReadRequest {
        std::string delimiter; ///< empty: exactly `count` bytes
        size_t count = 0;      ///< read_exactly: the size; read_until: the maximum
        size_t searched = 0;   ///< bytes already searched for the delimiter
        RecordHandler handler;
    };

    /// The read side: what came in and how it is read.
    struct Input {
        Buffer buffer;                        ///< read, not yet consumed by the application
        std::unique_ptr<ReadRequest> request; ///< read_until / read_exactly waiting, if any
        tw_buf *borrowed = nullptr;           ///< the buffer on_borrowed_data is reading, if any
        size_t reserve = 0;                   ///< bytes the next read reserves (adapts to what reads bring)
        uint64_t last_read_ns = 0;            ///< for the read and idle timeouts
        bool reading = true;                  ///< not paused, and the peer's stream not ended
        bool peer_eof = false;                ///< Connection::peer_closed()
        bool delivering = false;              ///< deliver_input() is running
        bool read_any = false;                ///< a byte was read (enable_rma must come before)
        bool borrow_refused = false;          ///< recv_buf_borrow said -EOPNOTSUPP
    };

    /// The write side: what is queued and how it goes out.
    struct Output {
        Buffer buffer;                ///< queued for the transport
        uint64_t last_write_ns = 0;   ///< for the write and idle timeouts
        uint64_t progress = 0;        ///< counts writes that moved bytes (close()'s stall check)
        bool blocked = false;         ///< Connection::write_blocked()
        bool want_write = false;      ///< TW_EV_WRITE asked for
        bool shutdown_queued = false; ///< shutdown_write() with output queued: SHUT_WR once it is written
    };

    struct Timers {
        std::unique_ptr<Timer> timeout;    ///< the read, write and idle timeouts (connection_timeouts.cpp)
        std::unique_ptr<Timer> linger;     ///< close()'s stall bound, and an RMA hold's
        uint64_t linger_progress_seen = 0; ///< Output::progress when the linger timer last looked
    };

    /// The application's callbacks, and the framework's.
    struct Handlers {
        DataHandler on_data;
        CloseHandler on_close;
        DrainHandler on_drain;
        EofHandler on_eof;
        DrainHandler on_write_low;
        BorrowedDataHandler on_borrowed;
        ConnectionAccess::Established on_established;  ///< handshake outcome (framework)
        const char *established_handler = "";          ///< "accept handler" or "connect handler", for the log
        std::function<void(Connection &)> on_finished; ///< unregisters (framework)
        int depth = 0;                                 ///< callbacks running now (CallbackScope)
        bool release_pending = false;                  ///< drop them once the last running one returns
    };

    /// One-sided remote memory, once enabled: one of the two.
    struct Rma {
        std::unique_ptr<rma::Link> link;     ///< the emulation over the stream
        std::unique_ptr<rma::Native> native; ///< or the transport's own (TW_CAP_RMA)
    };

    /// Counts a callback running; handlers dropped meanwhile go when the last one returns.
    struct CallbackScope {
        explicit CallbackScope(Impl &m);
        ~CallbackScope();
        Impl &impl;
    };

    Impl(Loop &loop, Transport &transport, tw_conn *conn, uint64_t id, Settings settings);
    ~Impl();

    Connection *owner = nullptr; ///< the Connection this is the state of
    Loop *loop;
    Transport *transport;
    tw_conn *conn; ///< nullptr once ended
    uint64_t id;
    Settings settings;
    Lifecycle life;
    Input in;
    Output out;
    Handlers handlers;
    std::shared_ptr<void> context; ///< the application's (set_context)
    std::string fallback_reason;
    std::shared_ptr<Connection> keep_alive; ///< an open connection keeps itself
    Timers timers;
    Rma rma;

    // connection.cpp: events, reading, writing, the end.
    static void on_event(tw_conn *conn, uint32_t events, void *arg);
    void handle_read();
    ssize_t read_into(Buffer &target, size_t *reserved);
    size_t reserve_size();
    void adapt_reserve(size_t got, size_t reserved);
    /// Hand the input to the pending read request(s), then on_data.
    /// Returns false when a callback threw (the connection is finished).
    bool deliver_input();
    void peer_ended();
    void close_after_eof();
    bool write(const void *data, size_t len);
    bool write(Buffer &data);
    void write_failed(int err, OnClose on_close);
    /// writev the first chunks of `buf` to the transport (no drain).
    ssize_t writev_chunks(evbuffer *buf);
    /// Write the output until the transport takes no more: 0 or the error.
    int write_queued();
    void flush();
    void update_interest();
    void shutdown_write();
    void close();
    void abort();
    void resume_reading();
    void finish(std::error_code code, int error, std::string reason, EndedBy who, OnClose on_close);
    void release_handlers();
    template <class F> bool guarded(const char *callback, F &&f);
    void callback_failed(const char *callback, const char *what);
    void run_close_callback(const CloseHandler &cb, const CloseInfo &info);
    std::string error_text(const char *call, int err) const;

    // connection_records.cpp
    void set_request(ReadRequest req);
    /// 0 when the request cannot be served yet, else the record's size;
    /// -1 after closing the connection for an over-long record.
    ssize_t record_ready(ReadRequest &req);

    // connection_timeouts.cpp
    void queued_output_changed();
    void note_read();
    void note_write_progress();
    void arm_timeouts();
    void check_timeouts();

    // connection_zero_copy.cpp
    bool borrowing() const { return static_cast<bool>(handlers.on_borrowed) && !in.borrow_refused && !rma.link; }
    /// Serve a read event by borrowing; false when the rest must be copied.
    bool read_borrowed();
    /// Return a buffer still borrowed (the handler closed the connection).
    void give_back_borrowed();
    ssize_t write_lent(size_t min_len, const FillHandler &fill);

    // connection_rma.cpp
    bool rma_enabled() const { return rma.link || rma.native; }
    bool enable_rma(std::string *why);
    RmaExposurePtr expose(void *data, size_t len, RmaAccess access, std::string *why);
    RmaMemoryPtr rma_memory(size_t len, std::string *why);
    std::error_code rma_post(uint32_t op, std::string_view descriptor, uint64_t offset, void *local, size_t len,
                             RmaCallback done, std::string *why);
    bool rma_revoke(uint64_t exposure, std::function<void()> done);
    bool rma_exposed(uint64_t exposure) const;
    /// Write what the output holds (RMA chunks pumped in as it drains)
    /// without running callbacks; asks for TW_EV_WRITE for the rest.
    void push_output();
    /// After a read with RMA on: frames to the input, RMA answered,
    /// callbacks run.  False when the connection finished.
    bool rma_after_read();
    void run_rma_completions();
};

} // namespace twinwire
