// SPDX-License-Identifier: MIT
#include "phase.hpp"

#include <algorithm>
#include <cstdint>

namespace twinwire::bench {

void Worker::finish(const std::string &why)
{
    if (finished_) return;
    finished_ = true;
    error = why;
    on_finish();
    if (conn_) {
        stats = conn_->stats();
        rings.size = sizeof rings;
        have_rings = conn_->transport_ctrl(TW_RDMA_CTRL_NS, TW_RDMA_CTRL_GET_RINGS, &rings, sizeof rings) == 0;
        conn_->on_close(nullptr);
        conn_->close();
        conn_.reset();
    }
    phase_->worker_done();
}

Phase::Phase(Runtime &rt, const TargetOptions &target, unsigned connections, MakeWorker make)
    : rt_(rt), target_(target), remaining_(connections)
{
    for (unsigned i = 0; i < connections; ++i) {
        workers_.push_back(make(i));
        workers_.back()->phase_ = this;
        workers_.back()->live_ = &live_;
        loop_of_.push_back(static_cast<unsigned>(i % rt.loop_count()));
    }
}

void Phase::start(std::function<void()> on_done)
{
    on_done_ = std::move(on_done);
    std::shared_ptr<Phase> self = shared_from_this();
    for (size_t i = 0; i < workers_.size(); ++i) {
        ConnectOptions options(target_.host, target_.port);
        options.source_address = target_.source;
        options.loop = static_cast<int>(loop_of_[i]);
        std::shared_ptr<Worker> w = workers_[i];
        rt_.connect(options, [self, w](const ConnectionPtr &c, const std::string &err) {
            if (!c) {
                w->finish(err);
                return;
            }
            if (w->finished()) { // aborted while connecting
                c->abort();
                return;
            }
            w->conn_ = c;
            w->transport = c->transport_name();
            w->fallback_reason = c->fallback_reason();
            c->on_data([w](Connection &, Buffer &in) {
                if (!w->finished()) w->on_data(in);
            });
            if (w->zero_copy)
                c->on_borrowed_data([w](Connection &, const char *data, size_t len) {
                    return w->finished() ? len : w->on_borrowed(data, len);
                });
            c->on_close([w](Connection &, const CloseInfo &info) {
                w->conn_.reset();
                w->finish("connection ended early: " + info.reason);
            });
            w->begin();
        });
    }
}

void Phase::abort(const std::string &why)
{
    std::shared_ptr<Phase> self = shared_from_this();
    for (size_t i = 0; i < workers_.size(); ++i) {
        std::shared_ptr<Worker> w = workers_[i];
        rt_.loop(loop_of_[i]).post([self, w, why] { w->finish(why); });
    }
}

void Phase::worker_done()
{
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    std::shared_ptr<Phase> self = shared_from_this();
    rt_.loop(0).post([self] {
        auto done = std::move(self->on_done_);
        if (done) done();
    });
}

tw_conn_stats summed_stats(const Phase &phase)
{
    tw_conn_stats sum{};
    for (const auto &w : phase.workers()) {
        const tw_conn_stats &s = w->stats;
        sum.bytes_sent += s.bytes_sent;
        sum.bytes_received += s.bytes_received;
        sum.messages_sent += s.messages_sent;
        sum.messages_received += s.messages_received;
        sum.write_would_block += s.write_would_block;
        sum.credit_stalls += s.credit_stalls;
        sum.rnr_retries += s.rnr_retries;
        sum.cq_events += s.cq_events;
        sum.pool_exhausted += s.pool_exhausted;
        sum.zero_copy_sends += s.zero_copy_sends;
        sum.zero_copy_recvs += s.zero_copy_recvs;
        sum.control_sent += s.control_sent;
        sum.control_received += s.control_received;
    }
    return sum;
}

double measured_seconds(const Phase &phase)
{
    uint64_t first = UINT64_MAX, last = 0;
    for (const auto &w : phase.workers()) {
        if (w->start_ns == 0 || w->end_ns == 0) continue;
        first = std::min(first, w->start_ns);
        last = std::max(last, w->end_ns);
    }
    return last > first ? double(last - first) / 1e9 : 0.0;
}

} // namespace twinwire::bench

namespace twinwire::bench {

RingsSummary summed_rings(const Phase &phase)
{
    RingsSummary sum;
    for (const auto &w : phase.workers()) {
        if (!w->have_rings) continue;
        sum.present = true;
        sum.registered += w->rings.registered;
        sum.rx_ring = std::max(sum.rx_ring, w->rings.rx_ring);
        sum.tx_ring = std::max(sum.tx_ring, w->rings.tx_ring);
        sum.rx_grows += w->rings.rx_grows;
        sum.tx_grows += w->rings.tx_grows;
        sum.window_waits += w->rings.window_waits;
    }
    return sum;
}

} // namespace twinwire::bench
