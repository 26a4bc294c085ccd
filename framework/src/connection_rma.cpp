// SPDX-License-Identifier: MIT
// One-sided remote memory on a connection (docs/rma.md).  A transport with
// TW_CAP_RMA does it itself (rma_native.hpp); every other one gets the
// host's emulation over its stream (rma_link.hpp), where the exposing side
// checks bounds, mode and revocation before touching its memory.
#include "rma_link.hpp"
#include "rma_native.hpp"

#include <twinwire/connection.hpp>
#include <twinwire/loop.hpp>
#include <twinwire/transport.hpp>

#include <cerrno>
#include <exception>
#include <new>

namespace twinwire {
namespace {

void set_why(std::string *why, const std::string &text)
{
    if (why) *why = text;
}

} // namespace

bool Connection::enable_rma(std::string *why)
{
    if (rma_enabled()) return set_why(why, "RMA is already enabled on this connection"), false;
    if (!established_ || finished_ || closing_) return set_why(why, "the connection is not open"), false;
    if (read_any_ || write_progress_ || !output_.empty() || !input_.empty())
        return set_why(why, "bytes have already moved on this connection: enable RMA before the first write or read "
                            "(first thing in the accept or connect handler, on both ends)"),
               false;
    if (transport_->ops().caps & TW_CAP_RMA) {
        // Native: the stream stays as it is; completions come from the
        // transport's event delivery on the loop and run there.
        std::weak_ptr<Connection> weak = shared_from_this();
        native_ = std::make_unique<rma::Native>(
            transport_->ops(), conn_,
            [weak] {
                if (auto c = weak.lock()) c->run_rma_completions(); // c keeps it alive through a close
            },
            [weak] {
                if (auto c = weak.lock())
                    c->loop_->post([weak] {
                        if (auto c2 = weak.lock()) c2->run_rma_completions();
                    });
            });
        return true;
    }
    rma_ = std::make_unique<rma::Link>();
    rma_->hello(output_);
    push_output();
    return true;
}

RmaExposurePtr Connection::expose(void *data, size_t len, RmaAccess access, std::string *why)
{
    if (!rma_enabled()) return set_why(why, "RMA is not enabled on this connection (enable_rma)"), nullptr;
    if (finished_ || closing_) return set_why(why, "the connection is closing or closed"), nullptr;
    uint32_t bits = static_cast<uint32_t>(access);
    if (!data || !len || !bits || (bits & ~uint32_t(TW_RMA_READ | TW_RMA_WRITE)))
        return set_why(why, !data  ? "no memory to expose"
                            : !len ? "an empty exposure"
                                   : "an unknown access mode"),
               nullptr;
    std::string descriptor;
    uint64_t id = 0;
    if (native_) {
        std::string reason;
        if (native_->expose(data, len, bits, &id, &descriptor, &reason) < 0) return set_why(why, reason), nullptr;
    } else {
        id = rma_->expose(data, len, bits, &descriptor);
    }
    return RmaExposurePtr(new RmaExposure(shared_from_this(), loop_, id, data, len, access, std::move(descriptor)));
}

RmaMemoryPtr Connection::rma_memory(size_t len, std::string *why)
{
    if (!rma_enabled()) return set_why(why, "RMA is not enabled on this connection (enable_rma)"), nullptr;
    if (finished_ || closing_ || !conn_) return set_why(why, "the connection is closing or closed"), nullptr;
    if (!len) return set_why(why, "an empty buffer"), nullptr;
    if (native_) {
        tw_buf buf = TW_BUF_INIT;
        int rc = transport_->ops().rma_mem_get(conn_, len, &buf);
        if (rc == 0 && buf.data && buf.cap >= len)
            return RmaMemoryPtr(
                new RmaMemory(shared_from_this(), static_cast<char *>(buf.data), len, true, buf.token, buf.cap));
        if (rc != -EOPNOTSUPP && rc != 0) {
            const char *detail = transport_->ops().last_error(conn_);
            return set_why(why, std::string("rma_mem_get: ") + (detail ? detail : "refused")), nullptr;
        }
    }
    char *heap = new (std::nothrow) char[len];
    if (!heap) return set_why(why, "out of memory for " + std::to_string(len) + " bytes"), nullptr;
    return RmaMemoryPtr(new RmaMemory(shared_from_this(), heap, len, false, 0, len));
}

std::error_code Connection::rma_read(std::string_view descriptor, uint64_t offset, void *local, size_t len,
                                     RmaCallback done, std::string *why)
{
    return rma_post(TW_RMA_OP_READ, descriptor, offset, local, len, std::move(done), why);
}

std::error_code Connection::rma_write(std::string_view descriptor, uint64_t offset, const void *local, size_t len,
                                      RmaCallback done, std::string *why)
{
    // The emulation only reads `local` for a write.
    return rma_post(TW_RMA_OP_WRITE, descriptor, offset, const_cast<void *>(local), len, std::move(done), why);
}

std::error_code Connection::rma_post(uint32_t op, std::string_view descriptor, uint64_t offset, void *local, size_t len,
                                     RmaCallback done, std::string *why)
{
    if (!rma_enabled())
        return set_why(why, "RMA is not enabled on this connection (enable_rma)"), errc::rma_unavailable;
    if (finished_ || closing_) return set_why(why, "the connection is closing or closed"), errc::closed_locally;
    std::string reason;
    int rc = native_ ? native_->post(op, descriptor, offset, local, len, std::move(done), &reason)
                     : rma_->post(op, std::string(descriptor), offset, local, len, std::move(done), &reason);
    if (rc < 0) {
        set_why(why, reason);
        if (rc == -EAGAIN) return std::make_error_code(std::errc::resource_unavailable_try_again);
        if (rc == -EINVAL) return std::make_error_code(std::errc::invalid_argument);
        return code_from_transport(rc);
    }
    if (rma_) push_output();
    if (native_ && native_->waiting() && !want_write_) {
        want_write_ = true; // the transport announces room with TW_EV_WRITE
        update_interest();
    }
    return {};
}

bool Connection::rma_revoke(uint64_t id, std::function<void()> done)
{
    if (native_) {
        native_->revoke(id, std::move(done)); // done runs when the transport freed the window
        return true;
    }
    if (rma_) rma_->revoke(id);
    if (!done) return true;
    // The emulation copies what it sends at once and checks every access
    // when it arrives: nothing touches the memory after this call returns.
    // The callback still runs from the loop, never inside revoke().
    return loop_->post(std::move(done));
}

bool Connection::rma_exposed(uint64_t id) const
{
    if (finished_ || closing_) return false;
    return native_ ? native_->exposed(id) : rma_ && rma_->exposed(id);
}

void Connection::push_output()
{
    if (!conn_ || finished_) return;
    // Already waiting for TW_EV_WRITE: the transport took what it could, and
    // flush() writes the rest when it has room. Trying again on every write
    // would hand it the whole queue each time (a transport may copy that:
    // quadratic in the writes queued behind a slow peer).
    if (want_write_) return;
    if (int err = write_queued(); err < 0) {
        std::weak_ptr<Connection> weak = shared_from_this();
        // Never finish (and run on_close) inside the caller's write().
        loop_->post([weak, err] {
            if (auto c = weak.lock())
                c->finish(code_from_transport(err), err, c->error_text("write", err), false, false);
        });
        return;
    }
    if (!output_.empty() && !want_write_) {
        want_write_ = true;
        update_interest();
    }
}

// The peer's requests are answered only while the output holds less than
// write_buffer_limit (rma_link.hpp, demux): past it the link holds the
// rest and the connection stops reading, so a peer that sends requests and
// never reads the answers is paused, not buffered for.
bool Connection::rma_after_read()
{
    for (;;) {
        std::string why;
        if (!rma_->demux(input_, output_, settings_.write_limit, &why)) {
            // What arrived intact before the broken frame is the
            // application's, and so is the peer's end if it came first:
            // the same however the frames were cut into reads.
            if (deliver_input() && !closing_ && rma_->peer_ended() && !peer_eof_ && on_eof_) {
                peer_eof_ = true;
                CallbackScope scope(*this);
                try {
                    on_eof_(*this);
                } catch (const std::exception &e) {
                    callback_failed("on_eof callback", e.what());
                } catch (...) {
                    callback_failed("on_eof callback", "an exception that is not a std::exception");
                }
            }
            finish(errc::protocol_mismatch, -EPROTO, "RMA: " + why, true, false);
            return false;
        }
        run_rma_completions();
        if (finished_) return false;
        if (!output_.empty() || rma_->has_work()) push_output();
        if (finished_) return false;
        if (!rma_->held()) return true;
        if (output_.size() >= settings_.write_limit) break;
        // The transport took the answers at once.  push_output() may have
        // set the interest while the link held (reading off): set it again,
        // or a connection no longer held would never be read.
        rma_->release();
        update_interest();
    }
    update_interest(); // no more reading until flush() sees room
    // Held, the peer is cut off when the output takes no byte for
    // shutdown_timeout_ms: the stall bound close() gives a peer that stopped
    // reading, on close()'s timer (a close() replaces it).
    if (linger_timer_ && linger_timer_->active()) return true;
    std::weak_ptr<Connection> weak = shared_from_this();
    linger_progress_seen_ = write_progress_;
    linger_timer_ = std::make_unique<Timer>(*loop_, [weak] {
        auto c = weak.lock();
        if (!c || c->finished_ || c->closing_ || !c->rma_ || !c->rma_->held()) return;
        if (c->write_progress_ != c->linger_progress_seen_) {
            c->linger_progress_seen_ = c->write_progress_;
            c->linger_timer_->start(std::chrono::milliseconds(c->settings_.linger_ms));
            return;
        }
        std::string reason = "RMA: the peer has not read its answers for " + std::to_string(c->settings_.linger_ms) +
                             " ms: " + std::to_string(c->output_.size()) + " bytes queued, at write_buffer_limit " +
                             std::to_string(c->settings_.write_limit) +
                             "; its requests wait unread (shutdown_timeout_ms)";
        c->output_.clear();
        c->finish(errc::timed_out, -ETIMEDOUT, std::move(reason), false, false);
    });
    linger_timer_->start(std::chrono::milliseconds(settings_.linger_ms));
    return true;
}

RmaMemory::RmaMemory(std::weak_ptr<Connection> conn, char *data, size_t size, bool lent, uint64_t token, size_t cap)
    : conn_(std::move(conn)), data_(data), size_(size), lent_(lent), token_(token), cap_(cap)
{
}

RmaMemory::~RmaMemory()
{
    if (!lent_) {
        delete[] data_;
        return;
    }
    // Lent memory goes back while the connection lives; once it ended, the
    // transport took it back itself.
    auto c = conn_.lock();
    if (!c || !c->conn_) return;
    tw_buf buf = TW_BUF_INIT;
    buf.data = data_;
    buf.len = size_;
    buf.cap = cap_;
    buf.token = token_;
    c->transport_->ops().rma_mem_put(c->conn_, &buf);
}

RmaExposure::RmaExposure(std::weak_ptr<Connection> conn, Loop *loop, uint64_t id, void *data, size_t size,
                         RmaAccess access, std::string descriptor)
    : conn_(std::move(conn)), loop_(loop), id_(id), data_(data), size_(size), access_(access),
      descriptor_(std::move(descriptor))
{
}

RmaExposure::~RmaExposure()
{
    if (revoked_) return;
    if (auto c = conn_.lock()) c->rma_revoke(id_, {});
}

bool RmaExposure::active() const
{
    auto c = conn_.lock();
    return !revoked_ && c && c->rma_exposed(id_);
}

bool RmaExposure::revoke(std::function<void()> done)
{
    if (revoked_) return false;
    revoked_ = true;
    if (auto c = conn_.lock()) return c->rma_revoke(id_, std::move(done)), true;
    // The connection is gone, and its exposures with it (rule 6).  A loop
    // that no longer runs tasks leaves nothing to wait for.
    if (done && !loop_->post(done)) done();
    return true;
}

} // namespace twinwire
