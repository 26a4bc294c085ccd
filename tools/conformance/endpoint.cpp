// SPDX-License-Identifier: MIT
// Endpoint: a recording, rule-checking host for one connection.
#include "harness.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace twinwire::conformance {
namespace {

thread_local int g_ops_in_progress = 0;
constexpr size_t kMaxWrite = size_t(1) << 20;

} // namespace

OpGuard::OpGuard() { g_ops_in_progress++; }
OpGuard::~OpGuard() { g_ops_in_progress--; }
bool OpGuard::active() { return g_ops_in_progress > 0; }

Endpoint::Endpoint(const tw_transport_ops &ops, tw_conn *conn, std::string label)
    : ops_(ops), conn_(conn), label_(std::move(label))
{
}

Endpoint::~Endpoint() { close(); }

int Endpoint::attach()
{
    OpGuard guard;
    return ops_.set_callback(conn_, on_callback, this);
}

ssize_t Endpoint::read(void *buf, size_t len)
{
    OpGuard guard;
    return ops_.read(conn_, buf, len);
}

ssize_t Endpoint::write(const void *buf, size_t len)
{
    OpGuard guard;
    return ops_.write(conn_, buf, len);
}

int Endpoint::set_events(uint32_t events)
{
    OpGuard guard;
    interest_ = events;
    return ops_.set_events(conn_, events);
}

int Endpoint::shutdown(int how)
{
    OpGuard guard;
    return ops_.shutdown(conn_, how);
}

void Endpoint::close()
{
    if (closed) return;
    closed = true;
    OpGuard guard;
    ops_.close(conn_);
}

tw_conn_stats Endpoint::stats()
{
    tw_conn_stats s{};
    s.size = sizeof s;
    OpGuard guard;
    if (int rc = ops_.get_stats(conn_, &s); rc < 0)
        throw std::runtime_error(label_ + ": get_stats failed: " + std::to_string(rc));
    return s;
}

static sockaddr_storage name_of(const tw_transport_ops &ops, tw_conn *conn, bool peer, const std::string &label)
{
    sockaddr_storage ss{};
    uint32_t len = sizeof ss;
    OpGuard guard;
    int rc = peer ? ops.peer_addr(conn, reinterpret_cast<sockaddr *>(&ss), &len)
                  : ops.local_addr(conn, reinterpret_cast<sockaddr *>(&ss), &len);
    if (rc < 0)
        throw std::runtime_error(label + (peer ? ": peer_addr" : ": local_addr") + " failed: " + std::to_string(rc));
    return ss;
}

sockaddr_storage Endpoint::local_address() { return name_of(ops_, conn_, false, label_); }
sockaddr_storage Endpoint::peer_address() { return name_of(ops_, conn_, true, label_); }

void Endpoint::send(std::string_view data)
{
    outbox_.append(data);
    if (connected) pump_write();
    update_interest();
}

void Endpoint::shutdown_after_flush()
{
    shut_after_flush_ = true;
    if (connected) pump_write();
}

void Endpoint::pause_reading()
{
    reading_ = false;
    update_interest();
}

void Endpoint::resume_reading()
{
    reading_ = true;
    update_interest();
}

void Endpoint::update_interest()
{
    if (!manage_interest || closed) return;
    uint32_t want = 0;
    // An echo stops reading while its own output backs up; a plain reader
    // never does (its queue is what it sends, and stopping could deadlock).
    bool backed_up = echo && queued() >= backlog_limit;
    if (auto_read && reading_ && !eof && !read_error && !backed_up) want |= TW_EV_READ;
    if (queued() && !write_error) want |= TW_EV_WRITE;
    if (want != interest_) set_events(want);
}

void Endpoint::pump_read()
{
    if (scratch_.size() < read_chunk) scratch_.resize(read_chunk);
    size_t got = 0;
    for (size_t i = 0; i < reads_per_event && !eof && !read_error; i++) {
        ssize_t n = read(scratch_.data(), read_chunk);
        if (n > 0) {
            (echo ? outbox_ : received).append(scratch_.data(), static_cast<size_t>(n));
            got += static_cast<size_t>(n);
            if (echo && queued() >= backlog_limit) break;
        } else if (n == 0) {
            eof = true;
            if (echo) shut_after_flush_ = true;
        } else if (n != -EAGAIN) {
            read_error = static_cast<int>(n);
        } else {
            break;
        }
    }
    if (echo) pump_write();
    if (got && !echo && on_received) on_received(*this);
}

void Endpoint::pump_write()
{
    while (!closed && queued() && !write_error) {
        size_t len = std::min(queued(), kMaxWrite);
        ssize_t n = write(outbox_.data() + out_off_, len);
        if (n > 0) {
            if (static_cast<size_t>(n) < len) short_writes++;
            out_off_ += static_cast<size_t>(n);
        } else if (n == -EAGAIN) {
            eagain_writes++;
            break;
        } else if (n == 0) {
            zero_writes_++;
            break;
        } else {
            write_error = static_cast<int>(n);
        }
    }
    if (!queued()) {
        outbox_.clear();
        out_off_ = 0;
        if (shut_after_flush_ && !closed && !write_error) {
            shut_after_flush_ = false;
            shutdown(SHUT_WR);
        }
    } else if (out_off_ > kMaxWrite) {
        outbox_.erase(0, out_off_);
        out_off_ = 0;
    }
}

void Endpoint::on_callback(tw_conn *conn, uint32_t events, void *arg)
{
    auto *self = static_cast<Endpoint *>(arg);
    self->callbacks++;
    if (OpGuard::active()) self->reentrant_++;
    if (self->closed || conn != self->conn_) {
        self->after_close_++;
        return;
    }
    self->handle(events);
}

void Endpoint::handle(uint32_t events)
{
    if (events & TW_EV_CONNECTED) connected++;
    else if ((events & (TW_EV_READ | TW_EV_WRITE)) && !connected) before_connected_++;
    if (events & TW_EV_ERROR) {
        errors++;
        OpGuard guard;
        error_code = ops_.get_error(conn_);
        const char *text = ops_.last_error(conn_);
        last_error = text ? text : "(null)";
    }
    if (on_event && !on_event(*this, events)) return;
    if (closed) return;
    // After an error, reading collects what arrived before it, then the error.
    if ((events & (TW_EV_READ | TW_EV_ERROR)) && auto_read) pump_read();
    if (closed) return;
    if (events & (TW_EV_WRITE | TW_EV_CONNECTED)) pump_write();
    update_interest();
}

std::string Endpoint::describe() const
{
    return label_ + ": received " + std::to_string(received.size()) + ", queued " + std::to_string(queued()) +
           ", interest " + std::to_string(interest_) + ", callbacks " + std::to_string(callbacks) +
           (eof ? ", eof" : "") + (closed ? ", closed" : "") + ", read_error " + std::to_string(read_error) +
           ", write_error " + std::to_string(write_error) + ", errors " + std::to_string(errors) +
           (last_error.empty() ? "" : " (" + last_error + ")");
}

std::string Endpoint::rule_violations() const
{
    std::string out;
    auto add = [&](uint64_t n, const char *what) {
        if (n) out += label_ + ": " + std::to_string(n) + " " + what + "\n";
    };
    add(reentrant_, "callbacks from inside an operation (rule 2)");
    add(after_close_, "callbacks after close (rule 6)");
    add(before_connected_, "READ/WRITE events before TW_EV_CONNECTED (rule 3)");
    add(connected > 1 ? connected : 0, "TW_EV_CONNECTED reports (rule 3: exactly once)");
    add(errors > 1 ? errors : 0, "TW_EV_ERROR reports (rule 5: once)");
    add(zero_writes_, "writes that returned 0 for a non-empty buffer");
    if (errors && error_code >= 0)
        out += label_ + ": TW_EV_ERROR but get_error() = " + std::to_string(error_code) + "\n";
    if (errors && last_error.empty()) out += label_ + ": TW_EV_ERROR but last_error() is empty\n";
    return out;
}

} // namespace twinwire::conformance
