// SPDX-License-Identifier: MIT
#include "throughput_test.hpp"

#include "lent_write.hpp"
#include "wire.hpp"

#include <algorithm>

namespace twinwire::bench {
namespace {

constexpr uint64_t kRoundBytes = 256u << 10; // one round header per this much payload
constexpr uint64_t kBytesPerTurn = 4u << 20; // then let the loop serve others
constexpr size_t kHighWater = size_t(1) << 20;

} // namespace

ThroughputWorker::ThroughputWorker(size_t message_size, uint64_t iterations, double duration_s, bool zero_copy,
                                   bool bidirectional)
    : bidirectional(bidirectional), size_(message_size), iterations_(iterations),
      duration_ns_(static_cast<uint64_t>(duration_s * 1e9)),
      round_messages_(std::max<uint64_t>(1, kRoundBytes / message_size)),
      high_water_(std::max(kHighWater, 2 * message_size)), payload_(message_size, 'x')
{
    this->zero_copy = zero_copy;
}

void ThroughputWorker::begin()
{
    unsigned char hello[wire::kHelloSize];
    wire::encode_hello({bidirectional ? wire::Test::Echo : wire::Test::Sink, static_cast<uint32_t>(size_), zero_copy},
                       hello);
    conn_->write(hello, sizeof hello);
    std::weak_ptr<Worker> weak = shared_from_this();
    again_ = std::make_unique<Timer>(conn_->loop(), [weak] {
        if (auto w = weak.lock()) static_cast<ThroughputWorker *>(w.get())->pump();
    });
    conn_->on_drain([weak](Connection &) {
        if (auto w = weak.lock()) static_cast<ThroughputWorker *>(w.get())->pump();
    });
    start_ns = monotonic_ns();
    deadline_ns_ = start_ns + duration_ns_;
    pump();
}

bool ThroughputWorker::enough(uint64_t now) const
{
    return iterations_ ? messages >= iterations_ : now >= deadline_ns_;
}

void ThroughputWorker::pump()
{
    uint64_t this_turn = 0;
    while (!ended_ && !finished()) {
        if (conn_->output_queued() > high_water_) return; // on_drain resumes
        if (round_left_ == 0) {
            uint64_t n = round_messages_;
            if (iterations_) n = std::min(n, iterations_ - messages);
            const bool last = n == 0 || enough(monotonic_ns());
            if (bidirectional) { // the echo needs no round headers: the client knows what it sent
                if (!last) {
                    round_left_ = n;
                    continue;
                }
                ended_ = true;
                finish_if_all_back();
                return;
            }
            unsigned char header[wire::kCountSize];
            if (last) {
                wire::encode_count(0, header);
                ended_ = true;
            } else {
                wire::encode_count(n * size_, header);
                round_left_ = n;
            }
            if (!conn_->write(header, sizeof header)) break;
            continue;
        }
        Wrote wrote = write_message();
        if (wrote == Wrote::NoBufferFree) return;
        if (wrote == Wrote::Refused) break;
        --round_left_;
        ++messages;
        bytes += size_;
        this_turn += size_;
        ++unreported_;
        if (round_left_ == 0) {
            live_->operations.fetch_add(unreported_, std::memory_order_relaxed);
            live_->bytes.fetch_add(unreported_ * size_, std::memory_order_relaxed);
            unreported_ = 0;
        }
        if (this_turn >= kBytesPerTurn) {
            // Nothing queued means no on_drain will come: come back next turn.
            if (conn_->output_queued() == 0) again_->start(std::chrono::nanoseconds(0));
            return;
        }
    }
    if (!ended_ && !finished()) finish("write refused (connection closing or over write_buffer_limit)");
}

ThroughputWorker::Wrote ThroughputWorker::write_message()
{
    size_t lent = 0;
    if (zero_copy) {
        bool would_block = false;
        lent = write_through_lent(*conn_, payload_.data(), size_, &would_block);
        if (lent == 0 && would_block) return Wrote::NoBufferFree;
    }
    // The copying path, or the rest of a message a lent buffer did not hold.
    if (lent == size_ || conn_->write(payload_.data() + lent, size_ - lent)) return Wrote::Yes;
    return Wrote::Refused;
}

void ThroughputWorker::on_finish() { again_.reset(); }

void ThroughputWorker::take_echo(Buffer &in)
{
    // The payload is all 'x': check it where it lies, chunk by chunk.
    while (!in.empty()) {
        std::string_view chunk = in.first_chunk();
        if (chunk.find_first_not_of('x') != std::string_view::npos) {
            finish("the echo differs from what was sent");
            return;
        }
        acknowledged += chunk.size();
        in.drain(chunk.size());
    }
    if (acknowledged > bytes) {
        finish("the server echoed " + std::to_string(acknowledged) + " bytes, " + std::to_string(bytes) + " were sent");
        return;
    }
    finish_if_all_back();
}

void ThroughputWorker::finish_if_all_back()
{
    if (!ended_ || acknowledged != bytes) return;
    end_ns = monotonic_ns();
    finish("");
}

void ThroughputWorker::on_data(Buffer &in)
{
    if (bidirectional) {
        take_echo(in);
        return;
    }
    if (!ended_) {
        finish("the sink sent bytes before the end of the stream");
        return;
    }
    if (in.size() < wire::kCountSize) return;
    end_ns = monotonic_ns();
    unsigned char ack[wire::kCountSize];
    in.peek(ack, sizeof ack);
    in.drain(sizeof ack);
    acknowledged = wire::decode_count(ack);
    if (acknowledged != bytes)
        finish("the sink acknowledged " + std::to_string(acknowledged) + " of " + std::to_string(bytes) + " bytes");
    else finish("");
}

} // namespace twinwire::bench
