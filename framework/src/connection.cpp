// SPDX-License-Identifier: MIT
#include "connection_impl.hpp"
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
                                                     Established on_established)
{
    Connection::Impl::Settings settings{config.read_buffer_size(),     config.write_buffer_limit(),
                                        config.shutdown_timeout_ms(),  config.write_low_watermark(),
                                        config.write_high_watermark(), config.read_timeout_ms(),
                                        config.write_timeout_ms(),     config.idle_timeout_ms()};
    auto impl = std::make_unique<Connection::Impl>(loop, transport, conn, id, settings);
    impl->handlers.on_established = std::move(on_established);
    impl->handlers.established_handler = handler;
    std::shared_ptr<Connection> c(new Connection(std::move(impl)));
    Connection::Impl &m = *c->impl_;
    m.keep_alive = c;
    int rc = transport.ops().set_callback(conn, &Connection::Impl::on_event, &m);
    if (rc < 0) {
        m.keep_alive.reset();
        m.conn = nullptr;
        transport.ops().close(conn);
        return nullptr;
    }
    return c;
}

void ConnectionAccess::set_on_finished(Connection &c, std::function<void(Connection &)> fn)
{
    c.impl_->handlers.on_finished = std::move(fn);
}

void ConnectionAccess::set_fallback_reason(Connection &c, std::string reason)
{
    c.impl_->fallback_reason = std::move(reason);
}

Connection::Impl::Impl(Loop &loop, Transport &transport, tw_conn *conn, uint64_t id, Settings settings)
    : loop(&loop), transport(&transport), conn(conn), id(id), settings(settings)
{
}

Connection::Impl::~Impl() = default;

Connection::Connection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) { impl_->owner = this; }

Connection::~Connection()
{
    if (impl_->conn) impl_->transport->ops().close(impl_->conn);
}

const tw_transport_ops &Connection::ops() const { return impl_->transport->ops(); }
const std::string &Connection::transport_name() const { return impl_->transport->name(); }
bool Connection::is_open() const { return impl_->life.is_open(); }
bool Connection::peer_closed() const { return impl_->in.peer_eof; }
size_t Connection::output_queued() const { return impl_->out.buffer.size(); }
bool Connection::write_blocked() const { return impl_->out.blocked; }
uint64_t Connection::id() const { return impl_->id; }
Loop &Connection::loop() const { return *impl_->loop; }
const std::string &Connection::fallback_reason() const { return impl_->fallback_reason; }
tw_conn *Connection::raw() const { return impl_->conn; }
void Connection::set_context(std::shared_ptr<void> context) { impl_->context = std::move(context); }
void *Connection::context_pointer() const { return impl_->context.get(); }

void Connection::on_data(DataHandler handler) { impl_->handlers.on_data = std::move(handler); }
void Connection::on_eof(EofHandler handler) { impl_->handlers.on_eof = std::move(handler); }
void Connection::on_close(CloseHandler handler) { impl_->handlers.on_close = std::move(handler); }
void Connection::on_drain(DrainHandler handler) { impl_->handlers.on_drain = std::move(handler); }
void Connection::on_write_low(DrainHandler handler) { impl_->handlers.on_write_low = std::move(handler); }

bool Connection::write(const void *data, size_t len) { return impl_->write(data, len); }
bool Connection::write(Buffer &data) { return impl_->write(data); }
void Connection::shutdown_write() { impl_->shutdown_write(); }
void Connection::close() { impl_->close(); }
void Connection::abort() { impl_->abort(); }
void Connection::resume_reading() { impl_->resume_reading(); }

std::string Connection::Impl::error_text(const char *call, int err) const
{
    std::string text = std::string(call) + ": " + transport->error_text(err);
    if (conn) {
        const char *detail = transport->ops().last_error(conn);
        if (detail && *detail) text += " (" + std::string(detail) + ")";
    }
    return text;
}

// An exception from application code must not unwind through the
// transport's and libevent's C frames (that ends the process): it ends this
// connection only, with the reason logged.
template <class F> bool Connection::Impl::guarded(const char *callback, F &&f)
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

void Connection::Impl::callback_failed(const char *callback, const char *what)
{
    TW_ERROR("conn", "connection %llu (%s): the %s threw: %s; closing the connection",
             static_cast<unsigned long long>(id), transport->name().c_str(), callback, what);
    if (life.finished()) return;
    out.buffer.clear();
    finish(errc::callback_threw, -ECONNABORTED, std::string("the ") + callback + " threw: " + what, EndedBy::us,
           OnClose::post_to_loop);
}

void Connection::Impl::on_event(tw_conn *, uint32_t events, void *arg)
{
    Impl *c = static_cast<Impl *>(arg);
    std::shared_ptr<Connection> keep = c->owner->shared_from_this(); // alive until we return
    if (c->life.finished()) return;
    const tw_transport_ops &ops = c->transport->ops();

    if (c->life.connecting()) {
        if (events & TW_EV_CONNECTED) {
            c->life.enter(Phase::open);
            c->update_interest();
            c->arm_timeouts();
            ConnectionAccess::Established cb = std::move(c->handlers.on_established);
            if (cb) c->guarded(c->handlers.established_handler, [&] { cb(keep, 0, {}); });
            if (c->life.finished()) return;
        } else if (events & TW_EV_ERROR) {
            int err = ops.get_error(c->conn);
            if (err == 0) err = -ECONNABORTED;
            std::string why = c->error_text("connect", err);
            ConnectionAccess::Established cb = std::move(c->handlers.on_established);
            c->finish(code_from_transport(err), err, why, EndedBy::peer, OnClose::run_now);
            if (cb) c->guarded(c->handlers.established_handler, [&] { cb(keep, err, why); });
            return;
        } else {
            return; // nothing but CONNECTED or ERROR matters before the handshake ends
        }
    }
    if (events & TW_EV_WRITE) c->flush();
    if (c->life.finished()) return;
    if (events & (TW_EV_READ | TW_EV_ERROR)) c->handle_read();
    if (c->life.finished()) return;
    if (events & TW_EV_ERROR) {
        // Reading was paused (or nothing was left to read): end with the error.
        int err = ops.get_error(c->conn);
        if (err == 0) err = -ECONNRESET;
        c->finish(code_from_transport(err), err, c->error_text("connection", err), EndedBy::peer, OnClose::run_now);
    }
}

size_t Connection::Impl::reserve_size()
{
    if (in.reserve == 0) in.reserve = std::min(settings.read_size, kFirstReserve);
    return in.reserve;
}

// Reserve what reads actually bring: a fresh 64 KiB chain for every small
// message costs more than the read itself; a full reservation doubles it.
void Connection::Impl::adapt_reserve(size_t got, size_t reserved)
{
    if (got >= reserved) in.reserve = std::min(in.reserve * 2, settings.read_size);
    else if (got * 4 < in.reserve) in.reserve = std::max(in.reserve / 2, std::min(settings.read_size, kMinReserve));
}

// One read from the transport into `target`; `*reserved` is what it offered.
// Once reads fill their reservation up to read_buffer_size (16 KiB or more),
// they go into reused blocks (read_blocks.hpp); until then into libevent's
// own chains, sized to what reads bring.
ssize_t Connection::Impl::read_into(Buffer &target, size_t *reserved)
{
    const tw_transport_ops &ops = transport->ops();
    size_t want = reserve_size();
    if (want == settings.read_size && want >= read_blocks::kMinSize) {
        read_blocks::Block *block = read_blocks::take(want);
        if (!block) return -ENOMEM;
        struct iovec iov = {read_blocks::data(block), want};
        *reserved = want;
        ssize_t got = ops.readv(conn, &iov, 1);
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
    ssize_t got = ops.readv(conn, iov, n);
    if (got <= 0) return got;
    size_t left = static_cast<size_t>(got);
    for (int i = 0; i < n; ++i) {
        vec[i].iov_len = left < vec[i].iov_len ? left : vec[i].iov_len;
        left -= vec[i].iov_len;
    }
    evbuffer_commit_space(target.raw(), vec, n);
    return got;
}

void Connection::Impl::handle_read()
{
    if (!in.reading || life.finishing() || !conn) return;
    if (borrowing() && in.buffer.empty() && !in.request && read_borrowed()) return;
    // With RMA on, the wire carries frames: they land beside the input.
    // Held (the peer's answers unread: connection_rma.cpp), nothing is read.
    if (rma.link && rma.link->held()) return;
    Buffer &target = rma.link ? rma.link->wire_in() : in.buffer;
    size_t total = 0;
    // Frames still unparsed after a hold count against this event's reads:
    // the link never holds more than one event's worth of the peer's bytes.
    size_t room = kMaxReadPerEvent - (rma.link ? std::min(target.size(), kMaxReadPerEvent) : 0);
    ssize_t last = room ? 0 : -EAGAIN;
    // The transport's end, read before a hold, comes after the held frames.
    bool kept_end = rma.link && rma.link->take_transport_end(&last);
    while (!kept_end && total < room) {
        size_t reserved = 0;
        last = read_into(target, &reserved);
        if (last <= 0) break;
        in.read_any = true;
        if (total == 0) note_read();
        total += static_cast<size_t>(last);
        adapt_reserve(static_cast<size_t>(last), reserved);
        if (static_cast<size_t>(last) < reserved) {
            last = -EAGAIN; // a short read: the transport has nothing more right now
            break;
        }
    }
    if (rma.link && !rma_after_read()) return;
    if (!deliver_input()) return;
    if (life.finishing()) return;
    if (rma.link && rma.link->held()) {
        if (last <= 0 && last != -EAGAIN) rma.link->keep_transport_end(last);
        return;
    }
    if (last == 0 && rma.link) {
        // The peer's transport ended: no answer to this side's RMA can come.
        rma.link->fail_all(errc::peer_closed, "the peer closed the connection");
        run_rma_completions();
        if (life.finishing()) return;
        if (in.peer_eof) { // after its end frame: the stream had ended already
            in.reading = false;
            update_interest();
            return;
        }
    }
    if (rma.link && rma.link->peer_ended() && !in.peer_eof && last != 0) {
        // The peer's end frame: its stream is over, its RMA goes on, so
        // the transport keeps being read.
        in.peer_eof = true;
        if (handlers.on_eof) {
            CallbackScope scope(*this);
            guarded("on_eof callback", [this] { handlers.on_eof(*owner); });
        } else {
            close_after_eof();
        }
        return;
    }
    if (last == 0) {
        peer_ended();
    } else if (last < 0 && last != -EAGAIN) {
        int err = static_cast<int>(last);
        finish(code_from_transport(err), err, error_text("read", err), EndedBy::peer, OnClose::run_now);
    }
}

// Records first (read_until / read_exactly, as long as one is asked for
// and complete), then the rest to on_data.
bool Connection::Impl::deliver_input()
{
    if (in.delivering) return true; // the outer delivery loop picks up what changed
    CallbackScope scope(*this);
    in.delivering = true;
    bool ok = true;
    while (ok && !life.finishing() && in.reading) {
        if (in.request) {
            ssize_t n = record_ready(*in.request);
            if (n <= 0) break;
            RecordHandler handler = std::move(in.request->handler);
            in.request.reset();
            std::string record = in.buffer.take(static_cast<size_t>(n));
            ok = guarded("record callback", [&] { handler(*owner, std::move(record)); });
            continue;
        }
        if (!in.buffer.empty() && handlers.on_data)
            ok = guarded("on_data callback", [this] { handlers.on_data(*owner, in.buffer); });
        break;
    }
    in.delivering = false;
    return ok && !life.finished();
}

// The peer ended its side.  Everything it sent was delivered; the answers
// still go out: the connection stays open for writing until the application
// closes it (on_eof), or, without an on_eof handler, until the output that
// on_data queued has been written.
void Connection::Impl::peer_ended()
{
    in.reading = false;
    in.peer_eof = true;
    update_interest();
    if (handlers.on_eof) {
        CallbackScope scope(*this);
        guarded("on_eof callback", [this] { handlers.on_eof(*owner); });
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
void Connection::Impl::write_failed(int err, OnClose on_close)
{
    if (err != -EPIPE || !in.reading || life.finishing() || in.peer_eof || rma.link) {
        finish(code_from_transport(err), err, error_text("write", err), EndedBy::us, on_close);
        return;
    }
    TW_DEBUG("conn", "connection %llu: %s; reading what the peer sent before it closed",
             static_cast<unsigned long long>(id), error_text("write", err).c_str());
    out.buffer.clear();
    life.enter(Phase::write_shut);
    out.want_write = false;
    update_interest();
}

void Connection::Impl::close_after_eof()
{
    if (life.finishing()) return;
    if (out.buffer.empty()) {
        finish(errc::peer_closed, 0, "peer closed the connection", EndedBy::peer, OnClose::run_now);
        return;
    }
    life.enter(Phase::closing);
    update_interest();
}

bool Connection::Impl::write(const void *data, size_t len)
{
    if (!life.can_write()) return false;
    if (out.buffer.size() + len > settings.write_limit) return false;
    if (rma.link) {
        if (out.buffer.empty()) note_write_progress(); // the write timeout counts from here
        rma.link->frame_data(out.buffer, data, len);
        queued_output_changed();
        push_output();
        return true;
    }
    const char *p = static_cast<const char *>(data);
    if (out.buffer.empty() && len > 0) {
        // Nothing queued: hand it straight to the transport, queue the rest.
        ssize_t n = transport->ops().write(conn, p, len);
        if (n < 0 && n != -EAGAIN) {
            int err = static_cast<int>(n);
            write_failed(err, OnClose::post_to_loop);
            return false;
        }
        if (n > 0) {
            note_write_progress();
            p += n;
            len -= static_cast<size_t>(n);
        }
    }
    if (len > 0) {
        if (out.buffer.empty()) note_write_progress(); // the write timeout counts from here
        out.buffer.append(p, len);
        queued_output_changed();
        if (!out.want_write) {
            out.want_write = true;
            update_interest();
        }
    }
    return true;
}

bool Connection::Impl::write(Buffer &data)
{
    if (!life.can_write()) return false;
    if (out.buffer.size() + data.size() > settings.write_limit) return false;
    if (rma.link) {
        if (out.buffer.empty()) note_write_progress();
        rma.link->frame_data(out.buffer, data);
        queued_output_changed();
        push_output();
        return true;
    }
    if (out.buffer.empty() && !data.empty()) {
        // Nothing queued: writev the chunks now (an echo answers in this turn
        // of the loop, not the next), queue only what the transport left.
        ssize_t n = writev_chunks(data.raw());
        if (n < 0 && n != -EAGAIN) {
            int err = static_cast<int>(n);
            write_failed(err, OnClose::post_to_loop);
            return false;
        }
        if (n > 0) {
            note_write_progress();
            data.drain(static_cast<size_t>(n));
        }
        if (data.empty()) return true;
    }
    if (out.buffer.empty()) note_write_progress();
    out.buffer.append(data);
    queued_output_changed();
    if (!out.want_write) {
        out.want_write = true;
        update_interest();
    }
    return true;
}

ssize_t Connection::Impl::writev_chunks(struct evbuffer *buf)
{
    struct evbuffer_iovec vec[kMaxIov];
    int n = evbuffer_peek(buf, -1, nullptr, vec, kMaxIov);
    if (n > kMaxIov) n = kMaxIov;
    struct iovec iov[kMaxIov];
    for (int i = 0; i < n; ++i) {
        iov[i].iov_base = vec[i].iov_base;
        iov[i].iov_len = vec[i].iov_len;
    }
    return transport->ops().writev(conn, iov, n);
}

int Connection::Impl::write_queued()
{
    if (rma.link) rma.link->pump(out.buffer);
    while (!out.buffer.empty()) {
        ssize_t w = writev_chunks(out.buffer.raw());
        if (w == -EAGAIN) break;
        if (w < 0) return static_cast<int>(w);
        out.buffer.drain(static_cast<size_t>(w));
        if (w > 0) note_write_progress();
        if (rma.link) rma.link->pump(out.buffer); // RMA chunks follow as the output drains
    }
    return 0;
}

void Connection::Impl::flush()
{
    if (!conn) return;
    const tw_transport_ops &ops = transport->ops();
    if (rma.native && rma.native->waiting()) rma.native->retry();
    if (int err = write_queued(); err < 0) {
        write_failed(err, OnClose::run_now);
        return;
    }
    if (rma.link && rma.link->held() && out.buffer.size() < settings.write_limit) {
        // The peer read its answers: its held requests, then reading, go on.
        rma.link->release();
        update_interest();
        handle_read();
        if (life.finished() || !conn) return;
    }
    if (out.blocked && out.buffer.size() <= settings.write_low) {
        out.blocked = false;
        if (handlers.on_write_low) {
            CallbackScope scope(*this);
            if (!guarded("on_write_low", [this] { handlers.on_write_low(*owner); })) return;
        }
        if (life.finished() || !conn) return;
    }
    if (!out.buffer.empty() || (rma.native && rma.native->waiting())) return; // WRITE interest stays on
    out.want_write = false;
    if (out.shutdown_queued) {
        out.shutdown_queued = false;
        ops.shutdown(conn, SHUT_WR);
    }
    if (life.finishing()) { // closing: everything went out
        if (in.peer_eof) finish(errc::peer_closed, 0, "peer closed the connection", EndedBy::peer, OnClose::run_now);
        else finish(errc::closed_locally, 0, "closed", EndedBy::us, OnClose::run_now);
        return;
    }
    update_interest();
    if (handlers.on_drain) {
        CallbackScope scope(*this);
        guarded("on_drain callback", [this] { handlers.on_drain(*owner); });
    }
}

void Connection::Impl::update_interest()
{
    if (!conn || life.finished()) return;
    bool read = in.reading && !life.finishing() && !(rma.link && rma.link->held());
    uint32_t events = (read ? uint32_t(TW_EV_READ) : 0u) | (out.want_write ? uint32_t(TW_EV_WRITE) : 0u);
    transport->ops().set_events(conn, events);
}

void Connection::Impl::shutdown_write()
{
    if (!life.can_write()) return;
    life.enter(Phase::write_shut);
    if (rma.link) {
        // An end frame, not the transport's: RMA goes on both ways.
        rma.link->frame_end(out.buffer);
        push_output();
        return;
    }
    if (out.buffer.empty()) transport->ops().shutdown(conn, SHUT_WR);
    else out.shutdown_queued = true; // flush() sends it once the output is written
}

void Connection::Impl::close()
{
    if (life.finishing()) return;
    const bool established = !life.connecting();
    life.enter(Phase::closing);
    if (rma.link) rma.link->drop_all(); // rule 5: exposures withdrawn, no RMA callback after close()
    if (rma.native) {
        rma.native->withdraw_all();
        // The device may still move bytes into the application's memory:
        // close the transport now (it resets rather than lingers), so the
        // memory is the application's when close() returns.
        if (rma.native->busy()) {
            out.buffer.clear();
            finish(errc::closed_locally, 0, "closed (RMA transfers were in flight: queued output dropped)", EndedBy::us,
                   OnClose::post_to_loop);
            return;
        }
    }
    if (out.buffer.empty() || !established) {
        finish(errc::closed_locally, 0, "closed", EndedBy::us, OnClose::post_to_loop);
        return;
    }
    update_interest();
    std::weak_ptr<Connection> weak = owner->shared_from_this();
    // The bound is on a stall, not on the whole drain: a peer that half-closed
    // after its last request and reads its replies slowly still gets all of
    // them; one that stops reading for shutdown_timeout_ms does not.
    timers.linger_progress_seen = out.progress;
    timers.linger = std::make_unique<Timer>(*loop, [weak] {
        auto c = weak.lock();
        if (!c) return;
        Impl &m = *c->impl_;
        if (m.out.progress != m.timers.linger_progress_seen) {
            m.timers.linger_progress_seen = m.out.progress;
            m.timers.linger->start(std::chrono::milliseconds(m.settings.linger_ms));
            return;
        }
        m.finish(errc::timed_out, -ETIMEDOUT,
                 "close: " + std::to_string(m.out.buffer.size()) + " bytes still queued after " +
                     std::to_string(m.settings.linger_ms) + " ms without the peer taking any (shutdown_timeout_ms)",
                 EndedBy::us, OnClose::run_now);
    });
    timers.linger->start(std::chrono::milliseconds(settings.linger_ms));
}

void Connection::Impl::abort()
{
    if (life.finished()) return;
    out.buffer.clear();
    if (rma.link) rma.link->drop_all();
    if (rma.native) rma.native->withdraw_all();
    finish(errc::aborted, 0, "aborted", EndedBy::us, OnClose::post_to_loop);
}

void Connection::pause_reading()
{
    Impl &m = *impl_;
    if (!m.in.reading) return;
    m.in.reading = false;
    m.update_interest();
}

void Connection::Impl::resume_reading()
{
    if (in.reading || life.finishing()) return;
    in.reading = true;
    update_interest();
    note_read(); // the read timeout counts from here
    // Bytes already buffered get delivered without waiting for new ones.
    if (!in.buffer.empty() && (handlers.on_data || in.request)) {
        std::weak_ptr<Connection> weak = owner->shared_from_this();
        loop->post([weak] {
            auto c = weak.lock();
            if (c && c->impl_->in.reading && !c->impl_->life.finishing()) c->impl_->deliver_input();
        });
    }
}

// Handlers often capture the connection itself; dropping them when it ends
// breaks that cycle.  Never while one of them is running: its closure would
// be destroyed under it.
void Connection::Impl::release_handlers()
{
    if (handlers.depth > 0) {
        handlers.release_pending = true;
        return;
    }
    handlers.on_data = nullptr;
    handlers.on_drain = nullptr;
    handlers.on_eof = nullptr;
    handlers.on_write_low = nullptr;
    handlers.on_borrowed = nullptr;
    in.request.reset();
    handlers.release_pending = false;
}

Connection::Impl::CallbackScope::CallbackScope(Impl &m) : impl(m) { ++impl.handlers.depth; }

Connection::Impl::CallbackScope::~CallbackScope()
{
    if (--impl.handlers.depth == 0 && impl.handlers.release_pending) impl.release_handlers();
}

void Connection::Impl::finish(std::error_code code, int error, std::string reason, EndedBy who, OnClose on_close)
{
    if (life.finished()) return;
    life.enter(Phase::finished);
    // Rule 6: the transport's RMA in flight completes with the connection's
    // error (what close() or abort() dropped stays dropped).
    if (rma.native) rma.native->fail_all(code, "the connection ended: " + reason);
    if (conn) {
        give_back_borrowed();
        transport->ops().close(conn);
        conn = nullptr;
    }
    if (rma.native) rma.native->detach();
    if (timers.linger) timers.linger->stop();
    if (timers.timeout) timers.timeout->stop();
    if (rma.link) rma.link->fail_all(code, "the connection ended: " + reason); // rule 6, as above
    if (rma_enabled()) run_rma_completions();
    release_handlers();
    CloseHandler close_cb = std::move(handlers.on_close);
    auto finished_cb = std::move(handlers.on_finished);
    std::shared_ptr<Connection> self = std::move(keep_alive); // keeps *this alive to the end
    CloseInfo info{error, std::move(reason), who == EndedBy::peer, code};
    if (error < 0)
        TW_DEBUG("conn", "connection %llu ended: %s", static_cast<unsigned long long>(id), info.reason.c_str());
    if (finished_cb) finished_cb(*owner);
    if (!close_cb) return;
    if (on_close == OnClose::post_to_loop && self) {
        // Never run on_close inside the caller's own close()/abort()/write().
        if (loop->post([self, close_cb, info] { self->impl_->run_close_callback(close_cb, info); })) return;
    }
    run_close_callback(close_cb, info);
}

void Connection::Impl::run_rma_completions()
{
    std::vector<std::function<void()>> completions;
    if (rma.link) completions = rma.link->take_completions();
    if (rma.native)
        for (auto &fn : rma.native->take_completions()) completions.push_back(std::move(fn));
    if (completions.empty()) return;
    CallbackScope scope(*this);
    for (auto &fn : completions)
        if (!guarded("RMA callback", fn)) break;
}

void Connection::Impl::run_close_callback(const CloseHandler &cb, const CloseInfo &info)
{
    try {
        cb(*owner, info);
    } catch (const std::exception &e) {
        TW_ERROR("conn", "connection %llu (%s): the on_close callback threw: %s", static_cast<unsigned long long>(id),
                 transport->name().c_str(), e.what());
    } catch (...) {
        TW_ERROR("conn", "connection %llu (%s): the on_close callback threw an exception that is not a std::exception",
                 static_cast<unsigned long long>(id), transport->name().c_str());
    }
}

std::string Connection::peer_address() const
{
    const Impl &m = *impl_;
    if (!m.conn) return {};
    struct sockaddr_storage ss;
    uint32_t len = sizeof ss;
    if (m.transport->ops().peer_addr(m.conn, reinterpret_cast<struct sockaddr *>(&ss), &len) < 0) return {};
    return sockaddr_text(reinterpret_cast<struct sockaddr *>(&ss));
}

std::string Connection::local_address() const
{
    const Impl &m = *impl_;
    if (!m.conn) return {};
    struct sockaddr_storage ss;
    uint32_t len = sizeof ss;
    if (m.transport->ops().local_addr(m.conn, reinterpret_cast<struct sockaddr *>(&ss), &len) < 0) return {};
    return sockaddr_text(reinterpret_cast<struct sockaddr *>(&ss));
}

tw_conn_stats Connection::stats() const
{
    tw_conn_stats s{};
    s.size = sizeof s;
    if (impl_->conn) impl_->transport->ops().get_stats(impl_->conn, &s);
    return s;
}

int Connection::transport_ctrl(const char *ns, uint32_t op, void *data, size_t len) const
{
    const Impl &m = *impl_;
    if (!m.conn) return -ENOTCONN;
    if (!ns) return -EINVAL; // the shared operations have their own members
    return m.transport->ops().ctrl(m.transport->handle(), m.conn, ns, op, data, len);
}

} // namespace twinwire
