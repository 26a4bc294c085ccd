// SPDX-License-Identifier: MIT
// The zero-copy paths of a connection: reading from borrowed receive buffers
// and writing into lent send buffers, beside the copying ones.
#include "connection_impl.hpp"

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

void Connection::on_borrowed_data(BorrowedDataHandler handler) { impl_->handlers.on_borrowed = std::move(handler); }
bool Connection::borrowing() const { return impl_->borrowing(); }
ssize_t Connection::write_lent(size_t min_len, const FillHandler &fill) { return impl_->write_lent(min_len, fill); }

// Returns true when the event is served; false when bytes the handler left
// (or a transport that lends nothing) must go through the copying read.
bool Connection::Impl::read_borrowed()
{
    const tw_transport_ops &ops = transport->ops();
    CallbackScope scope(*this);
    size_t total = 0;
    while (total < kMaxBorrowedPerEvent) {
        tw_buf buf = TW_BUF_INIT;
        int rc = ops.recv_buf_borrow(conn, &buf);
        if (rc == -EAGAIN) return true;
        if (rc == -EOPNOTSUPP) {
            in.borrow_refused = true;
            return false;
        }
        if (rc < 0) {
            finish(code_from_transport(rc), rc, error_text("recv_buf_borrow", rc), EndedBy::peer, OnClose::run_now);
            return true;
        }
        if (buf.len == 0) {
            peer_ended();
            return true;
        }
        if (total == 0) note_read();
        size_t used = 0;
        bool ok = false;
        in.borrowed = &buf;
        try { // as guarded(): an exception ends this connection only
            used = handlers.on_borrowed(*owner, static_cast<const char *>(buf.data), buf.len);
            ok = true;
        } catch (const std::exception &e) {
            callback_failed("borrowed-data callback", e.what());
        } catch (...) {
            callback_failed("borrowed-data callback", "an exception that is not a std::exception");
        }
        if (!in.borrowed) return true; // the connection ended inside the handler: given back by finish()
        in.borrowed = nullptr;
        if (used > buf.len) used = buf.len; // a handler's overstatement cannot skip bytes
        ops.recv_buf_return(conn, &buf, used);
        if (!ok || life.finishing() || !in.reading) return true;
        total += used;
        if (used < buf.len) return false;
    }
    return true; // more may be waiting: the next event (level-triggered) brings it
}

void Connection::Impl::give_back_borrowed()
{
    if (!in.borrowed) return;
    // Consumed, as the copying path would have read them before the close:
    // bytes left unread would make the transport's close abortive (TCP's
    // reset, RDMA's disconnect without SHUTDOWN), which can drop the replies.
    transport->ops().recv_buf_return(conn, in.borrowed, in.borrowed->len);
    in.borrowed = nullptr;
}

ssize_t Connection::Impl::write_lent(size_t min_len, const FillHandler &fill)
{
    if (!life.can_write()) return -ENOTCONN;
    if (rma.link) return -EOPNOTSUPP; // the framed stream of the RMA emulation: bytes go out as frames
    if (!out.buffer.empty()) return -EBUSY;
    const tw_transport_ops &ops = transport->ops();
    tw_buf buf = TW_BUF_INIT;
    int got = ops.send_buf_get(conn, min_len, &buf);
    if (got == -EAGAIN && !out.want_write) {
        // Nothing queued, so flush() finds the output empty on the next
        // TW_EV_WRITE and runs on_drain: the caller's cue to lend again.
        out.want_write = true;
        update_interest();
    }
    if (got < 0) return got;
    size_t len = 0;
    try {
        len = fill(static_cast<char *>(buf.data), buf.cap);
    } catch (...) {
        buf.len = 0; // give the buffer back before the exception goes on
        ops.send_buf_submit(conn, &buf);
        throw;
    }
    buf.len = len > buf.cap ? buf.cap : len;
    int rc = ops.send_buf_submit(conn, &buf);
    if (rc < 0) {
        // The bytes `fill` consumed are lost: the stream cannot go on, so
        // the connection ends, and the caller hears it (0 would read as
        // "nothing sent, try again", and a loop feeding it would spin).
        finish(code_from_transport(rc), rc, error_text("send_buf_submit", rc), EndedBy::us, OnClose::post_to_loop);
        return rc;
    }
    if (buf.len > 0) note_write_progress();
    return static_cast<ssize_t>(buf.len);
}

} // namespace twinwire
