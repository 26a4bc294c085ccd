// SPDX-License-Identifier: MIT
#include "latency_test.hpp"

#include "lent_write.hpp"
#include "wire.hpp"

#include <event2/buffer.h>

#include <cstring>

namespace twinwire::bench {

LatencyWorker::LatencyWorker(size_t message_size, uint64_t iterations, double duration_s, bool zero_copy)
    : size_(message_size), iterations_(iterations), duration_ns_(static_cast<uint64_t>(duration_s * 1e9)),
      payload_(message_size, '\0')
{
    for (size_t i = 0; i < payload_.size(); ++i) payload_[i] = static_cast<char>('a' + i % 26);
    this->zero_copy = zero_copy;
}

void LatencyWorker::begin()
{
    unsigned char hello[wire::kHelloSize];
    wire::encode_hello({wire::Test::Echo, static_cast<uint32_t>(size_), zero_copy}, hello);
    conn_->write(hello, sizeof hello);
    send();
}

// The first bytes carry a sequence number, so a stale or repeated echo shows.
void LatencyWorker::send()
{
    ++sequence_;
    std::memcpy(payload_.data(), &sequence_, std::min(sizeof sequence_, size_));
    sent_at_ = monotonic_ns();
    echoed_ = 0;
    size_t lent = 0;
    bool would_block = false;
    if (zero_copy) lent = write_through_lent(*conn_, payload_.data(), payload_.size(), &would_block);
    if (lent < size_ && !conn_->write(payload_.data() + lent, size_ - lent))
        finish("write refused (connection closing or over write_buffer_limit)");
}

// The echo checked piece by piece where it lies in the transport's memory.
size_t LatencyWorker::on_borrowed(const char *data, size_t len)
{
    if (echoed_ + len > size_) {
        finish("the echo returned " + std::to_string(echoed_ + len) + " bytes for a " + std::to_string(size_) +
               "-byte message");
        return len;
    }
    if (std::memcmp(data, payload_.data() + echoed_, len) != 0) {
        finish("the echo of round trip " + std::to_string(sequence_) + " differs from what was sent");
        return len;
    }
    echoed_ += len;
    if (echoed_ == size_) echo_complete(monotonic_ns());
    return len;
}

bool LatencyWorker::echo_matches(Buffer &in) const
{
    struct evbuffer_iovec vec[64];
    size_t offset = 0;
    struct evbuffer_ptr pos;
    evbuffer_ptr_set(in.raw(), &pos, 0, EVBUFFER_PTR_SET);
    while (offset < size_) {
        int n = evbuffer_peek(in.raw(), static_cast<ev_ssize_t>(size_ - offset), &pos, vec, 64);
        if (n <= 0) return false;
        for (int i = 0; i < n && offset < size_; ++i) {
            size_t len = std::min(vec[i].iov_len, size_ - offset);
            if (std::memcmp(vec[i].iov_base, payload_.data() + offset, len) != 0) return false;
            offset += len;
        }
        if (offset < size_) evbuffer_ptr_set(in.raw(), &pos, offset, EVBUFFER_PTR_SET);
    }
    return true;
}

void LatencyWorker::on_data(Buffer &in)
{
    if (in.size() < size_) return;
    const uint64_t now = monotonic_ns();
    if (in.size() > size_) {
        finish("the echo returned " + std::to_string(in.size()) + " bytes for a " + std::to_string(size_) +
               "-byte message");
        return;
    }
    if (!echo_matches(in)) {
        finish("the echo of round trip " + std::to_string(sequence_) + " differs from what was sent");
        return;
    }
    in.drain(size_);
    echo_complete(now);
}

void LatencyWorker::echo_complete(uint64_t now)
{
    if (warmup_left_ > 0) {
        if (--warmup_left_ == 0) {
            start_ns = now;
            deadline_ns_ = now + duration_ns_;
        }
    } else {
        histogram.record(now - sent_at_);
        ++round_trips;
        end_ns = now;
        live_->operations.fetch_add(1, std::memory_order_relaxed);
        live_->bytes.fetch_add(size_, std::memory_order_relaxed);
        if (iterations_ ? round_trips >= iterations_ : now >= deadline_ns_) {
            finish("");
            return;
        }
    }
    send();
}

} // namespace twinwire::bench
