// SPDX-License-Identifier: MIT
#include "connection_access.hpp"
#include "rma_link.hpp"
#include "rma_native.hpp"
#include "read_blocks.hpp"
#include "sockaddr_text.hpp"

#include <twinwire/connection.hpp>
#include <twinwire/log.hpp>
#include <twinwire/loop.hpp>
#include <twinwire/transport.hpp>

#include <event2/buffer.h>

#include <algorithm>
#include <cerrno>
#include <sys/socket.h>

namespace twinwire {
namespace {

// Read at most this much per event, so one busy connection cannot starve the
// others on its loop (events are level-triggered: the rest comes next time).
constexpr size_t kMaxReadPerEvent = 4u << 20;
constexpr int kMaxIov = 16;
constexpr size_t kFirstReserve = 16 * 1024;
// Small enough that libevent's chain (this plus its header, rounded up to
// 1 KiB) comes from malloc's per-thread cache: a small-message connection
// allocates and frees one chain per read.
constexpr size_t kMinReserve = 512;

} // namespace

std::shared_ptr<Connection> ConnectionAccess::create(Loop &loop, Transport &transport, tw_conn *conn, uint64_t id,
                                                     const Config &config, const char *handler,
                                                     Connection::Established on_established)
{
    Connection::Settings settings{config.read_buffer_size(),     config.write_buffer_limit(),
                                  config.shutdown_timeout_ms(),  config.write_low_watermark(),
                                  config.write_high_watermark(), config.read_timeout_ms(),
                                  config.write_timeout_ms(),     config.idle_timeout_ms()};
    std::shared_ptr<Connection> c(new Connection(loop, transport, conn, id, settings));
    c->self_ = c;
    c->on_established_ = std::move(on_established);
    c->established_handler_ = handler;
    int rc = transport.ops().set_callback(conn, &Connection::on_event, c.get());
    if (rc < 0) {
        c->self_.reset();
        c->conn_ = nullptr;
        transport.ops().close(conn);
        return nullptr;
    }
    return c;
}

void ConnectionAccess::set_on_finished(Connection &c, std::function<void(Connection &)> fn)
{
    c.on_finished_ = std::move(fn);
}

void ConnectionAccess::set_fallback_reason(Connection &c, std::string reason)
{
    c.fallback_reason_ = std::move(reason);
}

Connection::Connection(Loop &loop, Transport &transport, tw_conn *conn, uint64_t id, Settings settings)
    : loop_(&loop), transport_(&transport), conn_(conn), id_(id), settings_(settings)
{
}

Connection::~Connection()
{
    if (conn_) transport_->ops().close(conn_);
}

const tw_transport_ops &Connection::ops() const { return transport_->ops(); }
const std::string &Connection::transport_name() const { return transport_->name(); }
bool Connection::is_open() const { return established_ && !finished_ && !closing_; }
bool Connection::peer_closed() const { return peer_eof_; }
size_t Connection::output_queued() const { return output_.size(); }

void Connection::on_data(DataHandler handler) { on_data_ = std::move(handler); }
void Connection::on_eof(EofHandler handler) { on_eof_ = std::move(handler); }
void Connection::on_close(CloseHandler handler) { on_close_ = std::move(handler); }
void Connection::on_drain(DrainHandler handler) { on_drain_ = std::move(handler); }
void Connection::on_write_low(DrainHandler handler) { on_write_low_ = std::move(handler); }

std::string Connection::error_text(const char *call, int err) const
{
    std::string text = std::string(call) + ": " + transport_->error_text(err);
    if (conn_) {
        const char *detail = transport_->ops().last_error(conn_);
        if (detail && *detail) text += " (" + std::string(detail) + ")";
    }
    return text;
}

// An exception from application code must not unwind through the
// transport's and libevent's C frames (that ends the process): it ends this
// connection only, with the reason logged.
template <class F> bool Connection::guarded(const char *callback, F &&f)
{
    try {
        f();
        return true;
    } catch (const std::exception &e) {
        callback_failed(callback, e.what());
    } catch (...) {
        callback_failed(callback, "an exception that is not a std::exception");
    }
    return false;
}

void Connection::callback_failed(const char *callback, const char *what)
{
    TW_ERROR("conn", "connection %llu (%s): the %s threw: %s; closing the connection",
             static_cast<unsigned long long>(id_), transport_->name().c_str(), callback, what);
    if (finished_) return;
    output_.clear();
    finish(errc::callback_threw, -ECONNABORTED, std::string("the ") + callback + " threw: " + what, false, true);
}

void Connection::on_event(tw_conn *, uint32_t events, void *arg)
{
    Connection *c = static_cast<Connection *>(arg);
    std::shared_ptr<Connection> keep = c->shared_from_this(); // alive until we return
    if (c->finished_) return;
    const tw_transport_ops &ops = c->transport_->ops();

    if (!c->established_) {
        if (events & TW_EV_CONNECTED) {
            c->established_ = true;
            c->update_interest();
            c->arm_timeouts();
            Established cb = std::move(c->on_established_);
            if (cb) c->guarded(c->established_handler_, [&] { cb(keep, 0, {}); });
            if (c->finished_) return;
        } else if (events & TW_EV_ERROR) {
            int err = ops.get_error(c->conn_);
            if (err == 0) err = -ECONNABORTED;
            std::string why = c->error_text("connect", err);
            Established cb = std::move(c->on_established_);
            c->finish(code_from_transport(err), err, why, true, false);
            if (cb) c->guarded(c->established_handler_, [&] { cb(keep, err, why); });
            return;
        } else {
            return; // nothing but CONNECTED or ERROR matters before the handshake ends
        }
    }
    if (events & TW_EV_WRITE) c->flush();
    if (c->finished_) return;
    if (events & (TW_EV_READ | TW_EV_ERROR)) c->handle_read();
    if (c->finished_) return;
    if (events & TW_EV_ERROR) {
        // Reading was paused (or nothing was left to read): end with the error.
        int err = ops.get_error(c->conn_);
        if (err == 0) err = -ECONNRESET;
        c->finish(code_from_transport(err), err, c->error_text("connection", err), true, false);
    }
}

size_t Connection::reserve_size()
{
    if (reserve_ == 0) reserve_ = std::min(settings_.read_size, kFirstReserve);
    return reserve_;
}

// Reserve what reads actually bring: a fresh 64 KiB chain for every small
// message costs more than the read itself; a full reservation doubles it.
void Connection::adapt_reserve(size_t got, size_t reserved)
{
    if (got >= reserved) reserve_ = std::min(reserve_ * 2, settings_.read_size);
    else if (got * 4 < reserve_) reserve_ = std::max(reserve_ / 2, std::min(settings_.read_size, kMinReserve));
}

// One read from the transport into `target`; `*reserved` is what it offered.
// Once reads fill their reservation up to read_buffer_size (16 KiB or more),
// they go into reused blocks (read_blocks.hpp); until then into libevent's
// own chains, sized to what reads bring.
ssize_t Connection::read_into(Buffer &target, size_t *reserved)
{
    const tw_transport_ops &ops = transport_->ops();
    size_t want = reserve_size();
    if (want == settings_.read_size && want >= read_blocks::kMinSize) {
        read_blocks::Block *block = read_blocks::take(want);
        if (!block) return -ENOMEM;
        struct iovec iov = {read_blocks::data(block), want};
        *reserved = want;
        ssize_t got = ops.readv(conn_, &iov, 1);
        if (got <= 0) {
            read_blocks::give_back(block);
            return got;
        }
        return read_blocks::hand_over(block, static_cast<size_t>(got), target.raw()) ? got : -ENOMEM;
    }
    struct evbuffer_iovec vec[2];
    int n = evbuffer_reserve_space(target.raw(), static_cast<ev_ssize_t>(want), vec, 2);
    if (n <= 0) return -ENOMEM;
    struct iovec iov[2];
    for (int i = 0; i < n; ++i) {
        iov[i].iov_base = vec[i].iov_base;
        iov[i].iov_len = vec[i].iov_len;
        *reserved += vec[i].iov_len;
    }
    ssize_t got = ops.readv(conn_, iov, n);
    if (got <= 0) return got;
    size_t left = static_cast<size_t>(got);
    for (int i = 0; i < n; ++i) {
        vec[i].iov_len = left < vec[i].iov_len ? left : vec[i].iov_len;
        left -= vec[i].iov_len;
    }
    evbuffer_commit_space(target.raw(), vec, n);
    return got;
}

void Connection::handle_read()
{
    if (!reading_ || closing_ || !conn_) return;
    if (borrowing() && input_.empty() && !request_ && read_borrowed()) return;
    // With RMA on, the wire carries frames: they land beside the input.
    // Held (the peer's answers unread: connection_rma.cpp), nothing is read.
    if (rma_ && rma_->held()) return;
    Buffer &target = rma_ ? rma_->wire_in() : input_;
    size_t total = 0;
    // Frames still unparsed after a hold count against this event's reads:
    // the link never holds more than one event's worth of the peer's bytes.
    size_t room = kMaxReadPerEvent - (rma_ ? std::min(target.size(), kMaxReadPerEvent) : 0);
    ssize_t last = room ? 0 : -EAGAIN;
    // The transport's end, read before a hold, comes after the held frames.
    bool kept_end = rma_ && rma_->take_transport_end(&last);
    while (!kept_end && total < room) {
        size_t reserved = 0;
        last = read_into(target, &reserved);
        if (last <= 0) break;
        read_any_ = true;
        if (total == 0) note_read();
        total += static_cast<size_t>(last);
        adapt_reserve(static_cast<size_t>(last), reserved);
        if (static_cast<size_t>(last) < reserved) {
            last = -EAGAIN; // a short read: the transport has nothing more right now
            break;
        }
    }
    if (rma_ && !rma_after_read()) return;
    if (!deliver_input()) return;
    if (finished_ || closing_) return;
    if (rma_ && rma_->held()) {
        if (last <= 0 && last != -EAGAIN) rma_->keep_transport_end(last);
        return;
    }
    if (last == 0 && rma_) {
        // The peer's transport ended: no answer to this side's RMA can come.
        rma_->fail_all(errc::peer_closed, "the peer closed the connection");
        run_rma_completions();
        if (finished_ || closing_) return;
        if (peer_eof_) { // after its end frame: the stream had ended already
            reading_ = false;
            update_interest();
            return;
        }
    }
    if (rma_ && rma_->peer_ended() && !peer_eof_ && last != 0) {
        // The peer's end frame: its stream is over, its RMA goes on, so
        // the transport keeps being read.
        peer_eof_ = true;
        if (on_eof_) {
            CallbackScope scope(*this);
            guarded("on_eof callback", [this] { on_eof_(*this); });
        } else {
            close_after_eof();
        }
        return;
    }
    if (last == 0) {
        peer_ended();
    } else if (last < 0 && last != -EAGAIN) {
        int err = static_cast<int>(last);
        finish(code_from_transport(err), err, error_text("read", err), true, false);
    }
}

// Records first (read_until / read_exactly, as long as one is asked for
// and complete), then the rest to on_data.
bool Connection::deliver_input()
{
    if (delivering_) return true; // the outer delivery loop picks up what changed
    CallbackScope scope(*this);
    delivering_ = true;
    bool ok = true;
    while (ok && !finished_ && !closing_ && reading_) {
        if (request_) {
            ssize_t n = record_ready(*request_);
            if (n <= 0) break;
            RecordHandler handler = std::move(request_->handler);
            request_.reset();
            std::string record = input_.take(static_cast<size_t>(n));
            ok = guarded("record callback", [&] { handler(*this, std::move(record)); });
            continue;
        }
        if (!input_.empty() && on_data_) ok = guarded("on_data callback", [this] { on_data_(*this, input_); });
        break;
    }
    delivering_ = false;
    return ok && !finished_;
}

// The peer ended its side.  Everything it sent was delivered; the answers
// still go out: the connection stays open for writing until the application
// closes it (on_eof), or, without an on_eof handler, until the output that
// on_data queued has been written.
void Connection::peer_ended()
{
    reading_ = false;
    peer_eof_ = true;
    update_interest();
    if (on_eof_) {
        CallbackScope scope(*this);
        guarded("on_eof callback", [this] { on_eof_(*this); });
        return;
    }
    close_after_eof();
}

// A write the transport refused ends the connection, except -EPIPE: the
// peer closed cleanly while output was still due.  Those bytes cannot
// arrive, but what the peer sent before closing is still to be read (its
// reply refusing the request being written, typically), so writing stops
// and reading goes on to the peer's end of stream, which ends the
// connection.  Paused reading, a close under way or RMA framing end it now.
void Connection::write_failed(int err, bool defer_callback)
{
    if (err != -EPIPE || !reading_ || closing_ || finished_ || peer_eof_ || rma_) {
        finish(code_from_transport(err), err, error_text("write", err), false, defer_callback);
        return;
    }
    TW_DEBUG("conn", "connection %llu: %s; reading what the peer sent before it closed",
             static_cast<unsigned long long>(id_), error_text("write", err).c_str());
    output_.clear();
    write_shut_ = true;
    want_write_ = false;
    update_interest();
}

void Connection::close_after_eof()
{
    if (finished_ || closing_) return;
    if (output_.empty()) {
        finish(errc::peer_closed, 0, "peer closed the connection", true, false);
        return;
    }
    closing_ = true;
    update_interest();
}

bool Connection::write(const void *data, size_t len)
{
    if (finished_ || closing_ || write_shut_ || shut_pending_ || !established_) return false;
    if (output_.size() + len > settings_.write_limit) return false;
    if (rma_) {
        if (output_.empty()) note_write_progress(); // the write timeout counts from here
        rma_->frame_data(output_, data, len);
        queued_output_changed();
        push_output();
        return true;
    }
    const char *p = static_cast<const char *>(data);
    if (output_.empty() && len > 0) {
        // Nothing queued: hand it straight to the transport, queue the rest.
        ssize_t n = transport_->ops().write(conn_, p, len);
        if (n < 0 && n != -EAGAIN) {
            int err = static_cast<int>(n);
            write_failed(err, true);
            return false;
        }
        if (n > 0) {
            note_write_progress();
            p += n;
            len -= static_cast<size_t>(n);
        }
    }
    if (len > 0) {
        if (output_.empty()) note_write_progress(); // the write timeout counts from here
        output_.append(p, len);
        queued_output_changed();
        if (!want_write_) {
            want_write_ = true;
            update_interest();
        }
    }
    return true;
}

bool Connection::write(Buffer &data)
{
    if (finished_ || closing_ || write_shut_ || shut_pending_ || !established_) return false;
    if (output_.size() + data.size() > settings_.write_limit) return false;
    if (rma_) {
        if (output_.empty()) note_write_progress();
        rma_->frame_data(output_, data);
        queued_output_changed();
        push_output();
        return true;
    }
    if (output_.empty() && !data.empty()) {
        // Nothing queued: writev the chunks now (an echo answers in this turn
        // of the loop, not the next), queue only what the transport left.
        ssize_t n = writev_chunks(data.raw());
        if (n < 0 && n != -EAGAIN) {
            int err = static_cast<int>(n);
            write_failed(err, true);
            return false;
        }
        if (n > 0) {
            note_write_progress();
            data.drain(static_cast<size_t>(n));
        }
        if (data.empty()) return true;
    }
    if (output_.empty()) note_write_progress();
    output_.append(data);
    queued_output_changed();
    if (!want_write_) {
        want_write_ = true;
        update_interest();
    }
    return true;
}

ssize_t Connection::writev_chunks(struct evbuffer *buf)
{
    struct evbuffer_iovec vec[kMaxIov];
    int n = evbuffer_peek(buf, -1, nullptr, vec, kMaxIov);
    if (n > kMaxIov) n = kMaxIov;
    struct iovec iov[kMaxIov];
    for (int i = 0; i < n; ++i) {
        iov[i].iov_base = vec[i].iov_base;
        iov[i].iov_len = vec[i].iov_len;
    }
    return transport_->ops().writev(conn_, iov, n);
}

int Connection::write_queued()
{
    if (rma_) rma_->pump(output_);
    while (!output_.empty()) {
        ssize_t w = writev_chunks(output_.raw());
        if (w == -EAGAIN) break;
        if (w < 0) return static_cast<int>(w);
        output_.drain(static_cast<size_t>(w));
        if (w > 0) note_write_progress();
        if (rma_) rma_->pump(output_); // RMA chunks follow as the output drains
    }
    return 0;
}

void Connection::flush()
{
    if (!conn_) return;
    const tw_transport_ops &ops = transport_->ops();
    if (native_ && native_->waiting()) native_->retry();
    if (int err = write_queued(); err < 0) {
        write_failed(err, false);
        return;
    }
    if (rma_ && rma_->held() && output_.size() < settings_.write_limit) {
        // The peer read its answers: its held requests, then reading, go on.
        rma_->release();
        update_interest();
        handle_read();
        if (finished_ || !conn_) return;
    }
    if (write_blocked_ && output_.size() <= settings_.write_low) {
        write_blocked_ = false;
        if (on_write_low_) {
            CallbackScope scope(*this);
            if (!guarded("on_write_low", [this] { on_write_low_(*this); })) return;
        }
        if (finished_ || !conn_) return;
    }
    if (!output_.empty() || (native_ && native_->waiting())) return; // WRITE interest stays on
    want_write_ = false;
    if (shut_pending_) {
        shut_pending_ = false;
        write_shut_ = true;
        ops.shutdown(conn_, SHUT_WR);
    }
    if (closing_) {
        finish(peer_eof_ ? errc::peer_closed : errc::closed_locally, 0,
               peer_eof_ ? "peer closed the connection" : "closed", peer_eof_, false);
        return;
    }
    update_interest();
    if (on_drain_) {
        CallbackScope scope(*this);
        guarded("on_drain callback", [this] { on_drain_(*this); });
    }
}

void Connection::update_interest()
{
    if (!conn_ || finished_) return;
    bool read = reading_ && !closing_ && !(rma_ && rma_->held());
    uint32_t events = (read ? uint32_t(TW_EV_READ) : 0u) | (want_write_ ? uint32_t(TW_EV_WRITE) : 0u);
    transport_->ops().set_events(conn_, events);
}

void Connection::shutdown_write()
{
    if (finished_ || closing_ || write_shut_ || shut_pending_) return;
    if (rma_) {
        // An end frame, not the transport's: RMA goes on both ways.
        write_shut_ = true;
        rma_->frame_end(output_);
        push_output();
        return;
    }
    if (output_.empty()) {
        write_shut_ = true;
        transport_->ops().shutdown(conn_, SHUT_WR);
    } else {
        shut_pending_ = true;
    }
}

void Connection::close()
{
    if (finished_ || closing_) return;
    closing_ = true;
    if (rma_) rma_->drop_all(); // rule 5: exposures withdrawn, no RMA callback after close()
    if (native_) {
        native_->withdraw_all();
        // The device may still move bytes into the application's memory:
        // close the transport now (it resets rather than lingers), so the
        // memory is the application's when close() returns.
        if (native_->busy()) {
            output_.clear();
            finish(errc::closed_locally, 0, "closed (RMA transfers were in flight: queued output dropped)", false,
                   true);
            return;
        }
    }
    if (output_.empty() || !established_) {
        finish(errc::closed_locally, 0, "closed", false, true);
        return;
    }
    update_interest();
    std::weak_ptr<Connection> weak = shared_from_this();
    // The bound is on a stall, not on the whole drain: a peer that half-closed
    // after its last request and reads its replies slowly still gets all of
    // them; one that stops reading for shutdown_timeout_ms does not.
    linger_progress_seen_ = write_progress_;
    linger_timer_ = std::make_unique<Timer>(*loop_, [weak] {
        auto c = weak.lock();
        if (!c) return;
        if (c->write_progress_ != c->linger_progress_seen_) {
            c->linger_progress_seen_ = c->write_progress_;
            c->linger_timer_->start(std::chrono::milliseconds(c->settings_.linger_ms));
            return;
        }
        c->finish(errc::timed_out, -ETIMEDOUT,
                  "close: " + std::to_string(c->output_.size()) + " bytes still queued after " +
                      std::to_string(c->settings_.linger_ms) + " ms without the peer taking any (shutdown_timeout_ms)",
                  false, false);
    });
    linger_timer_->start(std::chrono::milliseconds(settings_.linger_ms));
}

void Connection::abort()
{
    if (finished_) return;
    output_.clear();
    if (rma_) rma_->drop_all();
    if (native_) native_->withdraw_all();
    finish(errc::aborted, 0, "aborted", false, true);
}

void Connection::pause_reading()
{
    if (!reading_) return;
    reading_ = false;
    update_interest();
}

void Connection::resume_reading()
{
    if (reading_ || closing_ || finished_) return;
    reading_ = true;
    update_interest();
    note_read(); // the read timeout counts from here
    // Bytes already buffered get delivered without waiting for new ones.
    if (!input_.empty() && (on_data_ || request_)) {
        std::weak_ptr<Connection> weak = shared_from_this();
        loop_->post([weak] {
            auto c = weak.lock();
            if (c && c->reading_ && !c->finished_ && !c->closing_) c->deliver_input();
        });
    }
}

// Handlers often capture the connection itself; dropping them when it ends
// breaks that cycle.  Never while one of them is running: its closure would
// be destroyed under it.
void Connection::release_handlers()
{
    if (callback_depth_ > 0) {
        release_pending_ = true;
        return;
    }
    on_data_ = nullptr;
    on_drain_ = nullptr;
    on_eof_ = nullptr;
    on_write_low_ = nullptr;
    on_borrowed_ = nullptr;
    request_.reset();
    release_pending_ = false;
}

Connection::CallbackScope::CallbackScope(Connection &c) : conn(c) { ++conn.callback_depth_; }

Connection::CallbackScope::~CallbackScope()
{
    if (--conn.callback_depth_ == 0 && conn.release_pending_) conn.release_handlers();
}

void Connection::finish(std::error_code code, int error, std::string reason, bool by_peer, bool defer_callback)
{
    if (finished_) return;
    finished_ = true;
    // Rule 6: the transport's RMA in flight completes with the connection's
    // error (what close() or abort() dropped stays dropped).
    if (native_) native_->fail_all(code, "the connection ended: " + reason);
    if (conn_) {
        give_back_borrowed();
        transport_->ops().close(conn_);
        conn_ = nullptr;
    }
    if (native_) native_->detach();
    if (linger_timer_) linger_timer_->stop();
    if (timeout_timer_) timeout_timer_->stop();
    if (rma_) rma_->fail_all(code, "the connection ended: " + reason); // rule 6, as above
    if (rma_ || native_) run_rma_completions();
    release_handlers();
    CloseHandler close_cb = std::move(on_close_);
    auto finished_cb = std::move(on_finished_);
    std::shared_ptr<Connection> self = std::move(self_); // keeps *this alive to the end
    CloseInfo info{error, std::move(reason), by_peer, code};
    if (error < 0)
        TW_DEBUG("conn", "connection %llu ended: %s", static_cast<unsigned long long>(id_), info.reason.c_str());
    if (finished_cb) finished_cb(*this);
    if (!close_cb) return;
    if (defer_callback && self) {
        // Never run on_close inside the caller's own close()/abort()/write().
        if (loop_->post([self, close_cb, info] { self->run_close_callback(close_cb, info); })) return;
    }
    run_close_callback(close_cb, info);
}

void Connection::run_rma_completions()
{
    std::vector<std::function<void()>> completions;
    if (rma_) completions = rma_->take_completions();
    if (native_)
        for (auto &fn : native_->take_completions()) completions.push_back(std::move(fn));
    if (completions.empty()) return;
    CallbackScope scope(*this);
    for (auto &fn : completions)
        if (!guarded("RMA callback", fn)) break;
}

void Connection::run_close_callback(const CloseHandler &cb, const CloseInfo &info)
{
    try {
        cb(*this, info);
    } catch (const std::exception &e) {
        TW_ERROR("conn", "connection %llu (%s): the on_close callback threw: %s", static_cast<unsigned long long>(id_),
                 transport_->name().c_str(), e.what());
    } catch (...) {
        TW_ERROR("conn", "connection %llu (%s): the on_close callback threw an exception that is not a std::exception",
                 static_cast<unsigned long long>(id_), transport_->name().c_str());
    }
}

std::string Connection::peer_address() const
{
    if (!conn_) return {};
    struct sockaddr_storage ss;
    uint32_t len = sizeof ss;
    if (transport_->ops().peer_addr(conn_, reinterpret_cast<struct sockaddr *>(&ss), &len) < 0) return {};
    return sockaddr_text(reinterpret_cast<struct sockaddr *>(&ss));
}

std::string Connection::local_address() const
{
    if (!conn_) return {};
    struct sockaddr_storage ss;
    uint32_t len = sizeof ss;
    if (transport_->ops().local_addr(conn_, reinterpret_cast<struct sockaddr *>(&ss), &len) < 0) return {};
    return sockaddr_text(reinterpret_cast<struct sockaddr *>(&ss));
}

tw_conn_stats Connection::stats() const
{
    tw_conn_stats s{};
    s.size = sizeof s;
    if (conn_) transport_->ops().get_stats(conn_, &s);
    return s;
}

int Connection::transport_ctrl(const char *ns, uint32_t op, void *data, size_t len) const
{
    if (!conn_) return -ENOTCONN;
    if (!ns) return -EINVAL; // the shared operations have their own members
    return transport_->ops().ctrl(transport_->handle(), conn_, ns, op, data, len);
}

} // namespace twinwire
