// SPDX-License-Identifier: MIT
// One-sided remote memory on a connection (docs/rma.md).  A transport with
// TW_CAP_RMA does it itself (rma_native.hpp); every other one gets the
// host's emulation over its stream (rma_link.hpp), where the exposing side
// checks bounds, mode and revocation before touching its memory.
#include "connection_impl.hpp"
#include "rma_link.hpp"
#include "rma_handles.hpp"
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

bool Connection::enable_rma(std::string *why) { return impl_->enable_rma(why); }
bool Connection::rma_enabled() const { return impl_->rma_enabled(); }
bool Connection::rma_native() const { return static_cast<bool>(impl_->rma.native); }

RmaExposurePtr Connection::expose(void *data, size_t len, RmaAccess access, std::string *why)
{
    return impl_->expose(data, len, access, why);
}

RmaMemoryPtr Connection::rma_memory(size_t len, std::string *why) { return impl_->rma_memory(len, why); }

bool Connection::Impl::enable_rma(std::string *why)
{
    if (rma_enabled()) return set_why(why, "RMA is already enabled on this connection"), false;
    if (!life.is_open()) return set_why(why, "the connection is not open"), false;
    if (in.read_any || out.progress || !out.buffer.empty() || !in.buffer.empty())
        return set_why(why, "bytes have already moved on this connection: enable RMA before the first write or read "
                            "(first thing in the accept or connect handler, on both ends)"),
               false;
    if (transport->ops().caps & TW_CAP_RMA) {
        // Native: the stream stays as it is; completions come from the
        // transport's event delivery on the loop and run there.
        std::weak_ptr<Connection> weak = owner->shared_from_this();
        rma.native = std::make_unique<rma::Native>(
            transport->ops(), conn,
            [weak] {
                if (auto c = weak.lock()) c->impl_->run_rma_completions(); // c keeps it alive through a close
            },
            [weak] {
                if (auto c = weak.lock())
                    c->impl_->loop->post([weak] {
                        if (auto c2 = weak.lock()) c2->impl_->run_rma_completions();
                    });
            });
        return true;
    }
    rma.link = std::make_unique<rma::Link>();
    rma.link->hello(out.buffer);
    push_output();
    return true;
}

RmaExposurePtr Connection::Impl::expose(void *data, size_t len, RmaAccess access, std::string *why)
{
    if (!rma_enabled()) return set_why(why, "RMA is not enabled on this connection (enable_rma)"), nullptr;
    if (life.finishing()) return set_why(why, "the connection is closing or closed"), nullptr;
    uint32_t bits = static_cast<uint32_t>(access);
    if (!data || !len || !bits || (bits & ~uint32_t(TW_RMA_READ | TW_RMA_WRITE)))
        return set_why(why, !data  ? "no memory to expose"
                            : !len ? "an empty exposure"
                                   : "an unknown access mode"),
               nullptr;
    std::string descriptor;
    uint64_t id = 0;
    if (rma.native) {
        std::string reason;
        if (rma.native->expose(data, len, bits, &id, &descriptor, &reason) < 0) return set_why(why, reason), nullptr;
    } else {
        id = rma.link->expose(data, len, bits, &descriptor);
    }
    return RmaExposure::Impl::make(owner->shared_from_this(), loop, id, data, len, access, std::move(descriptor));
}

RmaMemoryPtr Connection::Impl::rma_memory(size_t len, std::string *why)
{
    if (!rma_enabled()) return set_why(why, "RMA is not enabled on this connection (enable_rma)"), nullptr;
    if (life.finishing() || !conn) return set_why(why, "the connection is closing or closed"), nullptr;
    if (!len) return set_why(why, "an empty buffer"), nullptr;
    if (rma.native) {
        tw_buf buf = TW_BUF_INIT;
        int rc = transport->ops().rma_mem_get(conn, len, &buf);
        if (rc == 0 && buf.data && buf.cap >= len)
            return RmaMemory::Impl::make(owner->shared_from_this(), static_cast<char *>(buf.data), len, true, buf.token,
                                         buf.cap);
        if (rc != -EOPNOTSUPP && rc != 0) {
            const char *detail = transport->ops().last_error(conn);
            return set_why(why, std::string("rma_mem_get: ") + (detail ? detail : "refused")), nullptr;
        }
    }
    char *heap = new (std::nothrow) char[len];
    if (!heap) return set_why(why, "out of memory for " + std::to_string(len) + " bytes"), nullptr;
    return RmaMemory::Impl::make(owner->shared_from_this(), heap, len, false, 0, len);
}

std::error_code Connection::rma_read(std::string_view descriptor, uint64_t offset, void *local, size_t len,
                                     RmaCallback done, std::string *why)
{
    return impl_->rma_post(TW_RMA_OP_READ, descriptor, offset, local, len, std::move(done), why);
}

std::error_code Connection::rma_write(std::string_view descriptor, uint64_t offset, const void *local, size_t len,
                                      RmaCallback done, std::string *why)
{
    // The emulation only reads `local` for a write.
    return impl_->rma_post(TW_RMA_OP_WRITE, descriptor, offset, const_cast<void *>(local), len, std::move(done), why);
}

std::error_code Connection::Impl::rma_post(uint32_t op, std::string_view descriptor, uint64_t offset, void *local,
                                           size_t len, RmaCallback done, std::string *why)
{
    if (!rma_enabled())
        return set_why(why, "RMA is not enabled on this connection (enable_rma)"), errc::rma_unavailable;
    if (life.finishing()) return set_why(why, "the connection is closing or closed"), errc::closed_locally;
    std::string reason;
    int rc = rma.native ? rma.native->post(op, descriptor, offset, local, len, std::move(done), &reason)
                        : rma.link->post(op, std::string(descriptor), offset, local, len, std::move(done), &reason);
    if (rc < 0) {
        set_why(why, reason);
        if (rc == -EAGAIN) return std::make_error_code(std::errc::resource_unavailable_try_again);
        if (rc == -EINVAL) return std::make_error_code(std::errc::invalid_argument);
        return code_from_transport(rc);
    }
    if (rma.link) push_output();
    if (rma.native && rma.native->waiting() && !out.want_write) {
        out.want_write = true; // the transport announces room with TW_EV_WRITE
        update_interest();
    }
    return {};
}

bool Connection::Impl::rma_revoke(uint64_t exposure, std::function<void()> done)
{
    if (rma.native) {
        rma.native->revoke(exposure, std::move(done)); // done runs when the transport freed the window
        return true;
    }
    if (rma.link) rma.link->revoke(exposure);
    if (!done) return true;
    // The emulation copies what it sends at once and checks every access
    // when it arrives: nothing touches the memory after this call returns.
    // The callback still runs from the loop, never inside revoke().
    return loop->post(std::move(done));
}

bool Connection::Impl::rma_exposed(uint64_t exposure) const
{
    if (life.finishing()) return false;
    return rma.native ? rma.native->exposed(exposure) : rma.link && rma.link->exposed(exposure);
}

void Connection::Impl::push_output()
{
    if (!conn || life.finished()) return;
    // Already waiting for TW_EV_WRITE: the transport took what it could, and
    // flush() writes the rest when it has room. Trying again on every write
    // would hand it the whole queue each time (a transport may copy that:
    // quadratic in the writes queued behind a slow peer).
    if (out.want_write) return;
    if (int err = write_queued(); err < 0) {
        std::weak_ptr<Connection> weak = owner->shared_from_this();
        // Never finish (and run on_close) inside the caller's write().
        loop->post([weak, err] {
            if (auto c = weak.lock())
                c->impl_->finish(code_from_transport(err), err, c->impl_->error_text("write", err), EndedBy::us,
                                 OnClose::run_now);
        });
        return;
    }
    if (!out.buffer.empty() && !out.want_write) {
        out.want_write = true;
        update_interest();
    }
}

// The peer's requests are answered only while the output holds less than
// write_buffer_limit (rma_link.hpp, demux): past it the link holds the
// rest and the connection stops reading, so a peer that sends requests and
// never reads the answers is paused, not buffered for.
bool Connection::Impl::rma_after_read()
{
    for (;;) {
        std::string why;
        if (!rma.link->demux(in.buffer, out.buffer, settings.write_limit, &why)) {
            // What arrived intact before the broken frame is the
            // application's, and so is the peer's end if it came first:
            // the same however the frames were cut into reads.
            if (deliver_input() && !life.finishing() && rma.link->peer_ended() && !in.peer_eof && handlers.on_eof) {
                in.peer_eof = true;
                CallbackScope scope(*this);
                try {
                    handlers.on_eof(*owner);
                } catch (const std::exception &e) {
                    callback_failed("on_eof callback", e.what());
                } catch (...) {
                    callback_failed("on_eof callback", "an exception that is not a std::exception");
                }
            }
            finish(errc::protocol_mismatch, -EPROTO, "RMA: " + why, EndedBy::peer, OnClose::run_now);
            return false;
        }
        run_rma_completions();
        if (life.finished()) return false;
        if (!out.buffer.empty() || rma.link->has_work()) push_output();
        if (life.finished()) return false;
        if (!rma.link->held()) return true;
        if (out.buffer.size() >= settings.write_limit) break;
        // The transport took the answers at once.  push_output() may have
        // set the interest while the link held (reading off): set it again,
        // or a connection no longer held would never be read.
        rma.link->release();
        update_interest();
    }
    update_interest(); // no more reading until flush() sees room
    // Held, the peer is cut off when the output takes no byte for
    // shutdown_timeout_ms: the stall bound close() gives a peer that stopped
    // reading, on close()'s timer (a close() replaces it).
    if (timers.linger && timers.linger->active()) return true;
    std::weak_ptr<Connection> weak = owner->shared_from_this();
    timers.linger_progress_seen = out.progress;
    timers.linger = std::make_unique<Timer>(*loop, [weak] {
        auto c = weak.lock();
        if (!c) return;
        Impl &m = *c->impl_;
        if (m.life.finishing() || !m.rma.link || !m.rma.link->held()) return;
        if (m.out.progress != m.timers.linger_progress_seen) {
            m.timers.linger_progress_seen = m.out.progress;
            m.timers.linger->start(std::chrono::milliseconds(m.settings.linger_ms));
            return;
        }
        std::string reason = "RMA: the peer has not read its answers for " + std::to_string(m.settings.linger_ms) +
                             " ms: " + std::to_string(m.out.buffer.size()) + " bytes queued, at write_buffer_limit " +
                             std::to_string(m.settings.write_limit) +
                             "; its requests wait unread (shutdown_timeout_ms)";
        m.out.buffer.clear();
        m.finish(errc::timed_out, -ETIMEDOUT, std::move(reason), EndedBy::us, OnClose::run_now);
    });
    timers.linger->start(std::chrono::milliseconds(settings.linger_ms));
    return true;
}

RmaMemory::RmaMemory(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RmaMemory::~RmaMemory()
{
    const Impl &d = *impl_;
    if (!d.lent) {
        delete[] d.data;
        return;
    }
    // Lent memory goes back while the connection lives; once it ended, the
    // transport took it back itself.
    auto c = d.conn.lock();
    if (!c || !c->impl_->conn) return;
    tw_buf buf = TW_BUF_INIT;
    buf.data = d.data;
    buf.len = d.size;
    buf.cap = d.cap;
    buf.token = d.token;
    c->impl_->transport->ops().rma_mem_put(c->impl_->conn, &buf);
}

char *RmaMemory::data() const { return impl_->data; }
size_t RmaMemory::size() const { return impl_->size; }
bool RmaMemory::lent() const { return impl_->lent; }

RmaExposure::RmaExposure(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RmaExposure::~RmaExposure()
{
    if (impl_->revoked) return;
    if (auto c = impl_->conn.lock()) c->impl_->rma_revoke(impl_->id, {});
}

const std::string &RmaExposure::descriptor() const { return impl_->descriptor; }
void *RmaExposure::data() const { return impl_->data; }
size_t RmaExposure::size() const { return impl_->size; }
RmaAccess RmaExposure::access() const { return impl_->access; }

bool RmaExposure::active() const
{
    auto c = impl_->conn.lock();
    return !impl_->revoked && c && c->impl_->rma_exposed(impl_->id);
}

bool RmaExposure::revoke(std::function<void()> done)
{
    Impl &d = *impl_;
    if (d.revoked) return false;
    d.revoked = true;
    if (auto c = d.conn.lock()) return c->impl_->rma_revoke(d.id, std::move(done)), true;
    // The connection is gone, and its exposures with it (rule 6).  A loop
    // that no longer runs tasks leaves nothing to wait for.
    if (done && !d.loop->post(done)) done();
    return true;
}

} // namespace twinwire
