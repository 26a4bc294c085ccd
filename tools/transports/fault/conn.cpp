// SPDX-License-Identifier: MIT
// Connections: every operation goes to the inner connection unless the
// connection is targeted, and then faults are drawn from its generator.
// Bytes held back (latency, bandwidth, stalls) sit in a queue per direction
// and are announced through the pending-data hooks and a timer on the
// connection's own loop: delays are timers, never sleeps.
#include "fault.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <sys/socket.h>

namespace fault {
namespace {

constexpr size_t kQueueLimit = size_t(1) << 20;        // bytes held per direction
constexpr uint64_t kLingerNs = 5000000000ull;          // a closed connection's held bytes get this long
constexpr uint64_t kConnectTimeoutNs = 10000000000ull; // a connect fault's timeout when none is given
constexpr size_t kLogLimit = 64 * 1024;

const Settings &settings(const tw_conn *c) { return c->t->settings; }
const tw_transport_ops &inner_ops(const tw_conn *c) { return *c->t->inner; }
uint64_t now_of(const tw_conn *c) { return host_of(c)->now_ns(host_of(c)); }

void on_timer(tw_timer *, void *arg);
void on_inner(tw_conn *, uint32_t events, void *arg);

// What the inner connection should report: reads while fault's queue has
// room (or the host wants them), writes while fault has bytes to flush (or
// the host wants them and no burst is on).
void inner_set(tw_conn *c)
{
    if (!c->inner) return;
    uint32_t ev = 0;
    if (c->rx_shaped || c->closed) {
        if (c->rxq.bytes < kQueueLimit && !c->rx_eof && !c->rx_error) ev |= TW_EV_READ;
    } else {
        ev |= c->want & TW_EV_READ;
    }
    if (c->tx_shaped || c->closed) {
        if (!c->txq.chunks.empty() && c->txq.ready(now_of(c))) ev |= TW_EV_WRITE;
    } else if ((c->want & TW_EV_WRITE) && !c->eagain_until_ns) {
        ev |= TW_EV_WRITE;
    }
    if (ev != c->inner_events) {
        c->inner_events = ev;
        inner_ops(c).set_events(c->inner, ev);
    }
}

void schedule(tw_conn *c)
{
    if (!c->fl) return;
    uint64_t now = now_of(c), at = UINT64_MAX;
    // Held bytes wait for their time; the host hears of ready ones through
    // has_pending_data, checked before the loop sleeps.
    auto ready_at = [&](uint64_t t) {
        if (t > now && t < at) at = t;
    };
    // Actions run from the timer even when their time has already passed
    // (the thread may have been preempted since it was set): never lost.
    auto due_at = [&](uint64_t t) { at = std::min(at, std::max(t, now)); };
    if (!c->rxq.chunks.empty()) ready_at(c->rxq.chunks.front().ready_ns);
    if (!c->txq.chunks.empty() && !c->tx_blocked) due_at(c->txq.chunks.front().ready_ns);
    if (c->eagain_until_ns) due_at(c->eagain_until_ns);
    if (c->connect_deadline_ns) due_at(c->connect_deadline_ns);
    if (c->linger_deadline_ns) due_at(c->linger_deadline_ns);
    if (at == UINT64_MAX || (at == c->timer_at && at > now)) return;
    const tw_host *h = host_of(c);
    if (!c->timer && h->timer_add(c->fl->loop, on_timer, c, &c->timer) < 0) return;
    c->timer_at = at;
    h->timer_arm(c->timer, at - now, 0);
}

// Queue `n` bytes with the direction's delay; the queue keeps stream order.
void enqueue(tw_conn *c, Queue &q, const Shaping &shape, std::string data, bool may_stall, const char *dir)
{
    const size_t n = data.size();
    uint64_t now = now_of(c);
    uint64_t ready = now + shape.latency_ns + c->rng.upto(shape.jitter_ns);
    if (shape.bandwidth) {
        q.link_free_ns = std::max(q.link_free_ns, now) + n * 1000000000ull / shape.bandwidth;
        ready = std::max(ready, q.link_free_ns);
    }
    ready = std::max(ready, q.last_ready_ns);
    if (may_stall && c->rng.chance(settings(c).stall_probability)) {
        ready += settings(c).stall_ns;
        note(c, kStalls, "%s stall: nothing delivered for %llu ms", dir,
             static_cast<unsigned long long>(settings(c).stall_ns / 1000000));
    }
    if (ready > now)
        note(c, kDelayed, "%s %zu bytes held %llu us", dir, n, static_cast<unsigned long long>((ready - now) / 1000));
    q.last_ready_ns = ready;
    Chunk chunk;
    chunk.data = std::move(data);
    chunk.ready_ns = ready;
    q.chunks.push_back(std::move(chunk));
    q.bytes += n;
}

// Move what the inner connection has into the receive queue.
void pull(tw_conn *c)
{
    char buf[64 * 1024];
    while (c->inner && c->rxq.bytes < kQueueLimit && !c->rx_eof && !c->rx_error) {
        ssize_t n = inner_ops(c).read(c->inner, buf, sizeof buf);
        if (n > 0) {
            if (c->closed) continue; // nobody will read it
            if (c->rx_shaped) {
                enqueue(c, c->rxq, settings(c).rx, std::string(buf, static_cast<size_t>(n)), true, "rx");
            } else {
                Chunk chunk;
                chunk.data.assign(buf, static_cast<size_t>(n));
                c->rxq.chunks.push_back(std::move(chunk));
                c->rxq.bytes += static_cast<size_t>(n);
            }
        } else if (n == 0) {
            c->rx_eof = true;
        } else if (n == -EAGAIN) {
            break;
        } else {
            c->rx_error = static_cast<int>(n);
        }
    }
}

// Write what is due from the send queue to the inner connection.
void flush(tw_conn *c)
{
    uint64_t now = now_of(c);
    c->tx_blocked = false;
    while (c->inner && c->up && c->txq.ready(now)) {
        Chunk &head = c->txq.chunks.front();
        ssize_t w = inner_ops(c).write(c->inner, head.data.data() + head.off, head.data.size() - head.off);
        if (w == -EAGAIN) { // the inner connection's TW_EV_WRITE resumes it
            c->tx_blocked = true;
            break;
        }
        if (w < 0) { // the inner connection failed: it reports TW_EV_ERROR itself
            c->tx_error = static_cast<int>(w);
            c->txq.chunks.clear();
            c->txq.bytes = 0;
            break;
        }
        head.off += static_cast<size_t>(w);
        c->txq.bytes -= static_cast<size_t>(w);
        if (head.off == head.data.size()) c->txq.chunks.pop_front();
    }
    if (c->txq.chunks.empty() && c->shut_wr_pending && c->inner) {
        c->shut_wr_pending = false;
        inner_ops(c).shutdown(c->inner, SHUT_WR);
    }
}

// Close the inner connection abortively where it has a socket (the peer
// sees a reset, RST), plainly elsewhere (the peer sees end-of-stream or an error).
void abort_inner(tw_conn *c)
{
    if (!c->inner) return;
    int fd = -1;
    if (inner_ops(c).ctrl(c->t->inner_t, c->inner, nullptr, TW_CTRL_GET_FD, &fd, sizeof fd) == 0 && fd >= 0) {
        struct linger hard = {1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    }
    inner_ops(c).close(c->inner);
    c->inner = nullptr;
}

void fail(tw_conn *c, int code, const std::string &why)
{
    if (c->error) return;
    if (c->inner && c->up) pull(c); // what already arrived stays readable
    abort_inner(c);
    c->error = code;
    c->error_text = "fault: " + why + " (fault.seed " + std::to_string(settings(c).seed) + ", connection " +
                    std::to_string(c->ordinal) + ")";
    c->report_error = true;
    c->txq.chunks.clear();
    c->txq.bytes = 0;
    make_active(c);
}

void finish_linger(tw_conn *c)
{
    if (c->inner) inner_ops(c).close(c->inner);
    c->inner = nullptr;
    free_conn(c);
}

void on_timer(tw_timer *, void *arg)
{
    tw_conn *c = static_cast<tw_conn *>(arg);
    c->timer_at = 0;
    uint64_t now = now_of(c);
    advance(c, now);
    if (c->closed) {
        if (c->txq.chunks.empty() || !c->inner || now >= c->linger_deadline_ns) {
            finish_linger(c);
            return;
        }
        schedule(c);
        return;
    }
    schedule(c);
    if (own_events(c, now)) deliver(c); // may close c: nothing after it
}

void on_inner(tw_conn *, uint32_t events, void *arg)
{
    tw_conn *c = static_cast<tw_conn *>(arg);
    if (c->closed) { // lingering: flush, drop what arrives, finish on error or when done
        if (events & TW_EV_ERROR) return finish_linger(c);
        if (events & TW_EV_READ) pull(c);
        c->rxq.chunks.clear();
        c->rxq.bytes = 0;
        flush(c);
        if (c->txq.chunks.empty()) return finish_linger(c);
        inner_set(c);
        return;
    }
    uint32_t up = 0;
    if (events & TW_EV_CONNECTED) {
        c->up = true;
        up |= TW_EV_CONNECTED;
        if (c->reset_on_connect) {
            note(c, kConnectReset, "connect came up, then reset");
            if (c->cb) c->cb(c, TW_EV_CONNECTED, c->arg); // the host saw it come up; may close c
            else c->report_connected = true;
            return fail(c, -ECONNRESET, "connection reset right after it came up (fault.connect_reset_probability)");
        }
    }
    if (events & TW_EV_ERROR) up |= TW_EV_ERROR;
    if (events & (TW_EV_READ | TW_EV_ERROR)) {
        if (c->rx_shaped && c->up) pull(c);
        else if (events & TW_EV_READ) up |= TW_EV_READ;
    }
    if (events & TW_EV_WRITE) {
        if (c->tx_shaped) flush(c);
        else if (!c->eagain_until_ns) up |= TW_EV_WRITE;
    }
    inner_set(c);
    schedule(c);
    up &= c->want | TW_EV_CONNECTED | TW_EV_ERROR;
    if (up && c->cb) c->cb(c, up, c->arg); // may close c: nothing after it
}

// Copy ready bytes out of the receive queue.
size_t take(tw_conn *c, char *buf, size_t len, uint64_t now)
{
    size_t got = 0;
    while (got < len && c->rxq.ready(now)) {
        Chunk &head = c->rxq.chunks.front();
        size_t n = std::min(len - got, head.data.size() - head.off);
        std::memcpy(buf + got, head.data.data() + head.off, n);
        got += n;
        head.off += n;
        c->rxq.bytes -= n;
        if (head.off == head.data.size()) c->rxq.chunks.pop_front();
    }
    return got;
}

constexpr size_t kStageLimit = 256 * 1024; // readv/writev stage at most this much per call

size_t len_of(const struct iovec *iov, int iovcnt)
{
    size_t total = 0;
    for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
    return total;
}

size_t read_cap(tw_conn *c, size_t len)
{
    uint64_t max = c->targeted ? settings(c).max_read : 0;
    return max && len > max ? static_cast<size_t>(max) : len;
}

} // namespace

void note(tw_conn *c, Count which, const char *fmt, ...)
{
    c->counts[which]++;
    c->t->totals[which]++;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (c->log.size() < kLogLimit) c->log += std::string(line) + "\n";
    const tw_host *h = host_of(c);
    if (h->log_enabled(h, TW_LOG_DEBUG))
        h->log(h, TW_LOG_DEBUG, "connection %llu: %s", static_cast<unsigned long long>(c->ordinal), line);
}

bool targets(const Settings &s, uint64_t ordinal, uint32_t port)
{
    switch (s.target) {
    case Settings::Target::All:
        return true;
    case Settings::Target::OneIn:
        return ordinal % s.one_in == 0;
    case Settings::Target::Port:
        return port == s.port;
    }
    return false;
}

tw_conn *new_conn(tw_transport *t, tw_transport_loop *fl, tw_conn *inner, uint32_t port)
{
    tw_conn *c = new (std::nothrow) tw_conn{};
    if (!c) return nullptr;
    c->t = t;
    c->fl = fl;
    c->inner = inner;
    c->port = port;
    c->ordinal = ++t->ordinals;
    t->totals[kConnections]++;
    c->targeted = targets(t->settings, c->ordinal, port);
    if (c->targeted) {
        t->totals[kTargeted]++;
        c->rng.seed(t->settings.seed, c->ordinal);
        c->rx_shaped = t->settings.rx.active() || t->settings.stall_probability > 0;
        c->tx_shaped = t->settings.tx.active();
    }
    return c;
}

uint32_t own_events(tw_conn *c, uint64_t now)
{
    if (!c->cb || c->closed) return 0;
    uint32_t ev = 0;
    if (c->report_connected) ev |= TW_EV_CONNECTED;
    if (c->report_error) ev |= TW_EV_ERROR;
    if (c->want & TW_EV_READ) {
        if (c->rxq.ready(now)) ev |= TW_EV_READ;
        else if (c->rxq.chunks.empty() && c->up && (c->error || (c->rx_shaped && (c->rx_eof || c->rx_error))))
            ev |= TW_EV_READ;
    }
    if ((c->want & TW_EV_WRITE) && c->tx_shaped && c->up && !c->error && !c->shut_wr && !c->eagain_until_ns &&
        c->txq.bytes < kQueueLimit)
        ev |= TW_EV_WRITE;
    return ev;
}

void deliver(tw_conn *c)
{
    uint32_t ev = own_events(c, now_of(c));
    if (!ev) return;
    c->report_connected = false;
    c->report_error = false;
    c->cb(c, ev, c->arg);
}

void advance(tw_conn *c, uint64_t now)
{
    if (c->eagain_until_ns && now >= c->eagain_until_ns) {
        c->eagain_until_ns = 0;
        inner_set(c);
    }
    if (c->connect_deadline_ns && now >= c->connect_deadline_ns) {
        c->connect_deadline_ns = 0;
        fail(c, -ETIMEDOUT, "connect never answered (fault.connect_timeout_probability)");
    }
    flush(c);
    inner_set(c);
}

void make_active(tw_conn *c)
{
    if (c->in_active || !c->fl || !c->cb) return;
    c->in_active = true;
    c->fl->active.push_back(c);
}

void free_conn(tw_conn *c)
{
    if (c->timer) host_of(c)->timer_del(c->timer);
    if (c->fl) {
        auto &a = c->fl->active;
        a.erase(std::remove(a.begin(), a.end(), c), a.end());
        auto &l = c->fl->lingering;
        l.erase(std::remove(l.begin(), l.end(), c), l.end());
    }
    delete c;
}

} // namespace fault

using namespace fault;

extern "C" int fault_connect(tw_transport_loop *fl, const struct tw_connect_params *params, tw_conn **out)
{
    if (!params || params->size < TW_CONNECT_PARAMS_SIZE_V1 || !params->addr) return -EINVAL;
    tw_conn *c = new_conn(fl->t, fl, nullptr, port_of(params->addr));
    if (!c) return -ENOMEM;
    if (params->addrlen <= sizeof c->peer) {
        std::memcpy(&c->peer, params->addr, params->addrlen);
        c->peerlen = params->addrlen;
    }
    const Settings &s = fl->t->settings;
    if (c->targeted) {
        // One draw decides the connect's fate: refused, timing out, reset after it came up, or fine.
        double r = (s.connect_refuse_probability + s.connect_timeout_probability + s.connect_reset_probability) > 0
                       ? c->rng.unit()
                       : 1.0;
        if (r < s.connect_refuse_probability) {
            note(c, kRefused, "connect refused");
            c->error = -ECONNREFUSED;
            c->error_text = "fault: connect refused (fault.connect_refuse_probability; fault.seed " +
                            std::to_string(s.seed) + ", connection " + std::to_string(c->ordinal) + ")";
            c->report_error = true;
            *out = c;
            return 0;
        }
        r -= s.connect_refuse_probability;
        if (r < s.connect_timeout_probability) {
            uint64_t timeout = params->timeout_ms ? params->timeout_ms * 1000000ull : kConnectTimeoutNs;
            note(c, kTimedOut, "connect times out after %llu ms", static_cast<unsigned long long>(timeout / 1000000));
            c->connect_deadline_ns = now_of(c) + timeout;
            *out = c;
            return 0;
        }
        r -= s.connect_timeout_probability;
        c->reset_on_connect = r < s.connect_reset_probability;
    }
    int rc = fl->t->inner->connect(fl->inner, params, &c->inner);
    if (rc < 0) {
        c->inner = nullptr;
        free_conn(c);
        return rc;
    }
    *out = c;
    return 0;
}

extern "C" int fault_set_callback(tw_conn *c, tw_conn_cb cb, void *arg)
{
    bool first = !c->cb;
    c->cb = cb;
    c->arg = arg;
    if (first && c->inner) inner_ops(c).set_callback(c->inner, on_inner, c);
    if (c->targeted || c->report_error) make_active(c);
    schedule(c);
    return 0;
}

extern "C" int fault_set_events(tw_conn *c, uint32_t events)
{
    c->want = events & (TW_EV_READ | TW_EV_WRITE);
    if (!c->targeted && c->inner) return inner_ops(c).set_events(c->inner, c->want);
    inner_set(c);
    return 0;
}

extern "C" ssize_t fault_read(tw_conn *c, void *buf, size_t len)
{
    if (!c->targeted && c->inner && c->rxq.chunks.empty()) return inner_ops(c).read(c->inner, buf, len);
    c->reads++;
    size_t cap = read_cap(c, len);
    if (c->rx_shaped || !c->rxq.chunks.empty() || !c->inner) {
        if (c->recv_buf_out) return -EBUSY;
        uint64_t now = now_of(c);
        size_t got = take(c, static_cast<char *>(buf), cap, now);
        if (got) {
            if (cap < len && c->rxq.ready(now))
                note(c, kShortReads, "read %llu: %zu of %zu bytes", static_cast<unsigned long long>(c->reads), got,
                     len);
            inner_set(c);
            // The next held chunk's time may not have a timer yet (the one
            // that delivered this one was armed while it was due): arm it,
            // or nothing wakes the loop when that chunk becomes due.
            schedule(c);
            return static_cast<ssize_t>(got);
        }
        if (!c->rxq.chunks.empty()) {
            schedule(c);
            return -EAGAIN;
        }
        if (c->error) return c->error;
        if (c->rx_error) return c->rx_error;
        if (c->rx_eof) return 0;
        if (!c->inner) return -EAGAIN;
        if (int e = inner_ops(c).get_error(c->inner); e < 0) return e;
        if (c->rx_shaped) return -EAGAIN;
    }
    ssize_t r = inner_ops(c).read(c->inner, buf, cap);
    if (r > 0 && cap < len && static_cast<size_t>(r) == cap)
        note(c, kShortReads, "read %llu: %zu of %zu bytes", static_cast<unsigned long long>(c->reads), cap, len);
    return r;
}

extern "C" ssize_t fault_readv(tw_conn *c, const struct iovec *iov, int iovcnt)
{
    if (!c->targeted && c->inner && c->rxq.chunks.empty()) return inner_ops(c).readv(c->inner, iov, iovcnt);
    size_t total = len_of(iov, iovcnt);
    // Stage only what one read may return (fault.max_read), not 256 KiB per
    // call: a 700-byte read must not cost a 256 KiB buffer.
    std::string tmp(read_cap(c, std::min<size_t>(total, kStageLimit)), '\0');
    ssize_t r = fault_read(c, &tmp[0], tmp.size());
    if (r <= 0) return r;
    size_t off = 0;
    for (int i = 0; i < iovcnt && off < static_cast<size_t>(r); ++i) {
        size_t n = std::min(iov[i].iov_len, static_cast<size_t>(r) - off);
        std::memcpy(iov[i].iov_base, tmp.data() + off, n);
        off += n;
    }
    return r;
}

extern "C" ssize_t fault_write(tw_conn *c, const void *buf, size_t len)
{
    if (c->error) return c->error;
    // Nothing to fault in an empty write: it returns what the inner one does.
    if (!c->targeted || !len) return c->inner ? inner_ops(c).write(c->inner, buf, len) : -EAGAIN;
    if (!c->inner || !c->up) return -EAGAIN;
    if (c->shut_wr) return -EPIPE;
    if (c->tx_error) return c->tx_error;
    if (int e = inner_ops(c).get_error(c->inner); e < 0) return e;
    const Settings &s = settings(c);
    c->writes++;
    uint64_t now = now_of(c);
    if (c->eagain_until_ns) {
        c->would_block++;
        c->counts[kEagainReturns]++;
        c->t->totals[kEagainReturns]++;
        return -EAGAIN;
    }
    if (c->rng.chance(s.eagain_probability)) {
        note(c, kEagainBursts, "write %llu: -EAGAIN for %llu ms", static_cast<unsigned long long>(c->writes),
             static_cast<unsigned long long>(s.eagain_ns / 1000000));
        c->would_block++;
        c->counts[kEagainReturns]++;
        c->t->totals[kEagainReturns]++;
        c->eagain_until_ns = now + s.eagain_ns;
        inner_set(c);
        schedule(c);
        return -EAGAIN;
    }
    size_t n = len;
    bool cut = false;
    if (s.max_write && n > s.max_write) {
        n = static_cast<size_t>(s.max_write);
        cut = true;
    }
    if (s.reset_after_bytes) {
        if (c->bytes_written >= s.reset_after_bytes) {
            note(c, kResets, "write %llu: reset after %llu bytes", static_cast<unsigned long long>(c->writes),
                 static_cast<unsigned long long>(c->bytes_written));
            fail(c, -ECONNRESET,
                 "connection reset after " + std::to_string(c->bytes_written) +
                     " bytes written (fault.reset_after_bytes)");
            return -ECONNRESET;
        }
        uint64_t left = s.reset_after_bytes - c->bytes_written;
        if (n > left) n = static_cast<size_t>(left);
    }
    if (c->rng.chance(s.reset_probability)) {
        note(c, kResets, "write %llu: reset", static_cast<unsigned long long>(c->writes));
        fail(c, -ECONNRESET, "connection reset on write " + std::to_string(c->writes) + " (fault.reset_probability)");
        return -ECONNRESET;
    }
    ssize_t r;
    if (c->tx_shaped) {
        size_t room = kQueueLimit - std::min(kQueueLimit, c->txq.bytes);
        if (!room) {
            c->would_block++;
            return -EAGAIN;
        }
        if (n > room) c->would_block++;
        n = std::min(n, room);
        enqueue(c, c->txq, s.tx, std::string(static_cast<const char *>(buf), n), false, "tx");
        flush(c);
        inner_set(c);
        schedule(c);
        r = static_cast<ssize_t>(n);
    } else {
        r = inner_ops(c).write(c->inner, buf, n);
    }
    if (r > 0) {
        c->bytes_written += static_cast<uint64_t>(r);
        if (cut) c->would_block++;
        if (cut && static_cast<size_t>(r) == n)
            note(c, kShortWrites, "write %llu: %zu of %zu bytes", static_cast<unsigned long long>(c->writes), n, len);
    }
    return r;
}

extern "C" ssize_t fault_writev(tw_conn *c, const struct iovec *iov, int iovcnt)
{
    if (!c->targeted && c->inner && !c->error) return inner_ops(c).writev(c->inner, iov, iovcnt);
    // Stage only what one write may take (fault.max_write), not 256 KiB per call.
    size_t limit = kStageLimit;
    if (c->targeted && settings(c).max_write) limit = std::min<size_t>(limit, settings(c).max_write);
    std::string tmp;
    tmp.reserve(std::min(len_of(iov, iovcnt), limit));
    for (int i = 0; i < iovcnt && tmp.size() < limit; ++i)
        tmp.append(static_cast<const char *>(iov[i].iov_base), std::min(iov[i].iov_len, limit - tmp.size()));
    return fault_write(c, tmp.data(), tmp.size());
}

extern "C" int fault_shutdown(tw_conn *c, int how)
{
    if (!c->inner) return c->error ? c->error : -ENOTCONN;
    if (how == SHUT_WR || how == SHUT_RDWR) {
        c->shut_wr = true;
        if (!c->txq.chunks.empty()) {
            c->shut_wr_pending = true;
            if (how == SHUT_WR) return 0;
            how = SHUT_RD;
        }
    }
    return inner_ops(c).shutdown(c->inner, how);
}

extern "C" void fault_close(tw_conn *c)
{
    c->cb = nullptr;
    if (c->fl) {
        auto &a = c->fl->active;
        a.erase(std::remove(a.begin(), a.end(), c), a.end());
        c->in_active = false;
    }
    if (c->inner && !c->txq.chunks.empty() && !c->error && c->up && c->fl) {
        // Accepted bytes are still sent: linger until they are out, or for a bounded time.
        c->closed = true;
        c->linger_deadline_ns = now_of(c) + kLingerNs;
        c->fl->lingering.push_back(c);
        inner_set(c);
        schedule(c);
        return;
    }
    if (c->inner) inner_ops(c).close(c->inner);
    c->inner = nullptr;
    free_conn(c);
}

extern "C" int fault_get_error(tw_conn *c)
{
    if (c->error) return c->error;
    return c->inner ? inner_ops(c).get_error(c->inner) : 0;
}

extern "C" const char *fault_last_error(tw_conn *c)
{
    if (c->error) return c->error_text.c_str();
    return c->inner ? inner_ops(c).last_error(c->inner) : "";
}

extern "C" int fault_local_addr(tw_conn *c, struct sockaddr *addr, uint32_t *addrlen)
{
    return c->inner ? inner_ops(c).local_addr(c->inner, addr, addrlen) : -ENOTCONN;
}

extern "C" int fault_peer_addr(tw_conn *c, struct sockaddr *addr, uint32_t *addrlen)
{
    if (c->inner) return inner_ops(c).peer_addr(c->inner, addr, addrlen);
    if (!c->peerlen || !addrlen || *addrlen < c->peerlen) return -ENOTCONN;
    std::memcpy(addr, &c->peer, c->peerlen);
    *addrlen = c->peerlen;
    return 0;
}

extern "C" int fault_get_stats(tw_conn *c, struct tw_conn_stats *out)
{
    if (c->inner) {
        int rc = inner_ops(c).get_stats(c->inner, out);
        if (rc == 0 && TW_HAS_MEMBER(out, struct tw_conn_stats, write_would_block))
            out->write_would_block += c->would_block;
        if (rc == 0 && TW_HAS_MEMBER(out, struct tw_conn_stats, zero_copy_recvs)) {
            out->zero_copy_sends += c->zero_copy_sends;
            out->zero_copy_recvs += c->zero_copy_recvs;
        }
        return rc;
    }
    if (!out || out->size < 8) return -EINVAL;
    uint32_t size = out->size;
    std::memset(reinterpret_cast<char *>(out) + 8, 0, std::min<size_t>(size, sizeof *out) - 8);
    out->version = TW_CONN_STATS_VERSION;
    return 0;
}

// Zero copy: the inner transport's buffers where fault holds nothing in that
// direction; otherwise fault's own queue memory (filling or reading it in
// place is the only copy, as the ABI promises).
extern "C" int fault_send_buf_get(tw_conn *c, size_t min_len, struct tw_buf *out)
{
    if (!out || out->size < TW_BUF_SIZE_V1) return -EINVAL;
    if (c->error) return c->error;
    if (!c->inner || !c->up) return -EAGAIN;
    if (!c->tx_shaped) return inner_ops(c).send_buf_get(c->inner, min_len, out);
    if (c->send_buf_out) return -EBUSY;
    if (c->tx_error) return c->tx_error;
    size_t room = kQueueLimit - std::min(kQueueLimit, c->txq.bytes);
    if (min_len > kQueueLimit) return -EMSGSIZE;
    if (!room || room < min_len) return -EAGAIN;
    c->send_buf.assign(std::min<size_t>(room, std::max<size_t>(min_len, 64 * 1024)), '\0');
    c->send_buf_out = true;
    out->data = &c->send_buf[0];
    out->cap = c->send_buf.size();
    out->len = 0;
    out->token = c->ordinal;
    return 0;
}

extern "C" int fault_send_buf_submit(tw_conn *c, struct tw_buf *buf)
{
    if (!buf || buf->size < TW_BUF_SIZE_V1) return -EINVAL;
    if (!c->tx_shaped) {
        if (c->error) return c->error;
        if (!c->inner) return -EINVAL;
        return inner_ops(c).send_buf_submit(c->inner, buf);
    }
    if (!c->send_buf_out || buf->data != c->send_buf.data() || buf->len > c->send_buf.size()) return -EINVAL;
    c->send_buf_out = false;
    c->zero_copy_sends++;
    if (c->error) return c->error;
    if (!buf->len) return 0;
    c->send_buf.resize(buf->len);
    c->bytes_written += buf->len;
    enqueue(c, c->txq, settings(c).tx, std::move(c->send_buf), false, "tx");
    c->send_buf.clear();
    flush(c);
    inner_set(c);
    schedule(c);
    return 0;
}

extern "C" int fault_recv_buf_borrow(tw_conn *c, struct tw_buf *out)
{
    if (!out || out->size < TW_BUF_SIZE_V1) return -EINVAL;
    if (c->inner && !c->rx_shaped && c->rxq.chunks.empty()) return inner_ops(c).recv_buf_borrow(c->inner, out);
    if (c->recv_buf_out) return -EBUSY;
    if (c->rxq.ready(now_of(c))) {
        Chunk &head = c->rxq.chunks.front();
        out->data = &head.data[head.off];
        out->len = out->cap = read_cap(c, head.data.size() - head.off);
        out->token = c->ordinal;
        c->recv_buf_out = true;
        c->zero_copy_recvs++;
        return 0;
    }
    if (!c->rxq.chunks.empty()) return -EAGAIN;
    if (c->error) return c->error;
    if (c->rx_error) return c->rx_error;
    if (c->rx_eof) {
        out->data = nullptr;
        out->len = out->cap = 0;
        return 0;
    }
    return -EAGAIN;
}

extern "C" int fault_recv_buf_return(tw_conn *c, struct tw_buf *buf, size_t consumed)
{
    if (!buf || buf->size < TW_BUF_SIZE_V1) return -EINVAL;
    if (!c->recv_buf_out) {
        if (c->inner && !c->rx_shaped && c->rxq.chunks.empty())
            return inner_ops(c).recv_buf_return(c->inner, buf, consumed);
        return -EINVAL;
    }
    Chunk &head = c->rxq.chunks.front();
    if (buf->data != &head.data[head.off] || consumed > buf->len) return -EINVAL;
    c->recv_buf_out = false;
    head.off += consumed;
    c->rxq.bytes -= consumed;
    if (head.off == head.data.size()) c->rxq.chunks.pop_front();
    inner_set(c);
    schedule(c); // as after a read: the next held chunk needs its timer
    return 0;
}
