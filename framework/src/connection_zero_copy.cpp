// SPDX-License-Identifier: MIT
// The zero-copy paths of a connection: reading from borrowed receive buffers
// and writing into lent send buffers, beside the copying ones.
#include "connection_access.hpp"

#include <twinwire/connection.hpp>
#include <twinwire/error.hpp>
#include <twinwire/transport.hpp>

#include <cerrno>
#include <exception>

namespace twinwire {
namespace {

// As handle_read: one busy connection must not starve the others on its loop.
constexpr size_t kMaxBorrowedPerEvent = 4u << 20;

} // namespace

void Connection::on_borrowed_data(BorrowedDataHandler handler) { on_borrowed_ = std::move(handler); }

// Returns true when the event is served; false when bytes the handler left
// (or a transport that lends nothing) must go through the copying read.
bool Connection::read_borrowed()
{
    const tw_transport_ops &ops = transport_->ops();
    CallbackScope scope(*this);
    size_t total = 0;
    while (total < kMaxBorrowedPerEvent) {
        tw_buf buf = TW_BUF_INIT;
        int rc = ops.recv_buf_borrow(conn_, &buf);
        if (rc == -EAGAIN) return true;
        if (rc == -EOPNOTSUPP) {
            borrow_refused_ = true;
            return false;
        }
        if (rc < 0) {
            finish(code_from_transport(rc), rc, error_text("recv_buf_borrow", rc), true, false);
            return true;
        }
        if (buf.len == 0) {
            peer_ended();
            return true;
        }
        if (total == 0) note_read();
        size_t used = 0;
        bool ok = false;
        borrowed_ = &buf;
        try { // as guarded(): an exception ends this connection only
            used = on_borrowed_(*this, static_cast<const char *>(buf.data), buf.len);
            ok = true;
        } catch (const std::exception &e) {
            callback_failed("borrowed-data callback", e.what());
        } catch (...) {
            callback_failed("borrowed-data callback", "an exception that is not a std::exception");
        }
        if (!borrowed_) return true; // the connection ended inside the handler: given back by finish()
        borrowed_ = nullptr;
        if (used > buf.len) used = buf.len; // a handler's overstatement cannot skip bytes
        ops.recv_buf_return(conn_, &buf, used);
        if (!ok || finished_ || closing_ || !reading_) return true;
        total += used;
        if (used < buf.len) return false;
    }
    return true; // more may be waiting: the next event (level-triggered) brings it
}

void Connection::give_back_borrowed()
{
    if (!borrowed_) return;
    // Consumed, as the copying path would have read them before the close:
    // bytes left unread would make the transport's close abortive (TCP's
    // reset, RDMA's disconnect without SHUTDOWN), which can drop the replies.
    transport_->ops().recv_buf_return(conn_, borrowed_, borrowed_->len);
    borrowed_ = nullptr;
}

ssize_t Connection::write_lent(size_t min_len, const FillHandler &fill)
{
    if (finished_ || closing_ || write_shut_ || shut_pending_ || !established_) return -ENOTCONN;
    if (rma_) return -EOPNOTSUPP; // the framed stream of the RMA emulation: bytes go out as frames
    if (!output_.empty()) return -EBUSY;
    const tw_transport_ops &ops = transport_->ops();
    tw_buf buf = TW_BUF_INIT;
    int got = ops.send_buf_get(conn_, min_len, &buf);
    if (got == -EAGAIN && !want_write_) {
        // Nothing queued, so flush() finds the output empty on the next
        // TW_EV_WRITE and runs on_drain: the caller's cue to lend again.
        want_write_ = true;
        update_interest();
    }
    if (got < 0) return got;
    size_t len = 0;
    try {
        len = fill(static_cast<char *>(buf.data), buf.cap);
    } catch (...) {
        buf.len = 0; // give the buffer back before the exception goes on
        ops.send_buf_submit(conn_, &buf);
        throw;
    }
    buf.len = len > buf.cap ? buf.cap : len;
    int rc = ops.send_buf_submit(conn_, &buf);
    if (rc < 0) {
        // The bytes `fill` consumed are lost: the stream cannot go on, so
        // the connection ends, and the caller hears it (0 would read as
        // "nothing sent, try again", and a loop feeding it would spin).
        finish(code_from_transport(rc), rc, error_text("send_buf_submit", rc), false, true);
        return rc;
    }
    if (buf.len > 0) note_write_progress();
    return static_cast<ssize_t>(buf.len);
}

} // namespace twinwire
