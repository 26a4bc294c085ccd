// SPDX-License-Identifier: MIT
#include "resp_load.hpp"

#include "resp_reply.hpp"

#include <cstdio>

namespace twinwire::bench {

uint64_t RequestPool::take(uint64_t want)
{
    uint64_t now = left.load(std::memory_order_relaxed);
    uint64_t got;
    do {
        got = std::min(now, want);
        if (got == 0) return 0;
    } while (!left.compare_exchange_weak(now, now - got, std::memory_order_relaxed));
    return got;
}

std::string resp_command(std::initializer_list<std::string_view> words)
{
    std::string out = "*" + std::to_string(words.size()) + "\r\n";
    for (std::string_view w : words) {
        out += "$" + std::to_string(w.size()) + "\r\n";
        out.append(w.data(), w.size());
        out += "\r\n";
    }
    return out;
}

std::string resp_key(uint64_t n, const char *prefix)
{
    char key[48];
    std::snprintf(key, sizeof key, "%s:%012llu", prefix, static_cast<unsigned long long>(n));
    return key;
}

RespWorker::RespWorker(RespTest test, const RespOptions &options, std::shared_ptr<RequestPool> pool, uint64_t seed)
    : test_(test), pipeline_(options.pipeline), keyspace_(options.keyspace), value_(options.data_size, 'x'),
      pool_(std::move(pool)), random_(seed * 0x9E3779B97F4A7C15ull + 1)
{
}

// xorshift64*: cheap, and good enough to spread keys.
uint64_t RespWorker::next_random()
{
    random_ ^= random_ >> 12;
    random_ ^= random_ << 25;
    random_ ^= random_ >> 27;
    return random_ * 0x2545F4914F6CDD1Dull;
}

void RespWorker::begin()
{
    start_ns = monotonic_ns();
    send_batch();
}

void RespWorker::send_batch()
{
    outstanding_ = pool_->take(pipeline_);
    if (outstanding_ == 0) {
        finish("");
        return;
    }
    batch_.clear();
    for (uint64_t i = 0; i < outstanding_; ++i) batch_ += request();
    batch_sent_ns_ = monotonic_ns();
    if (!conn_->write(batch_)) finish("write refused (connection closing or over write_buffer_limit)");
}

// The commands of redis-benchmark's tests of the same names.
std::string RespWorker::request()
{
    switch (test_) {
    case RespTest::Set:
        return resp_command({"SET", resp_key(next_random() % keyspace_), value_});
    case RespTest::Get:
        return resp_command({"GET", resp_key(next_random() % keyspace_)});
    case RespTest::Incr:
        return resp_command({"INCR", resp_key(next_random() % keyspace_, "counter")});
    case RespTest::Lpush:
        return resp_command({"LPUSH", "mylist", value_});
    case RespTest::Mget: {
        std::string keys[kMgetKeys];
        for (std::string &k : keys) k = resp_key(next_random() % keyspace_);
        return resp_command(
            {"MGET", keys[0], keys[1], keys[2], keys[3], keys[4], keys[5], keys[6], keys[7], keys[8], keys[9]});
    }
    }
    return "";
}

bool RespWorker::expected(const resp::Reply &reply) const
{
    switch (test_) {
    case RespTest::Set:
        return reply.type == resp::Type::Status && reply.text == "OK";
    case RespTest::Get:
        return reply.type == resp::Type::Bulk || reply.type == resp::Type::NullBulk;
    case RespTest::Incr:
    case RespTest::Lpush:
        return reply.type == resp::Type::Integer;
    case RespTest::Mget:
        return reply.type == resp::Type::Array;
    }
    return false;
}

void RespWorker::on_data(Buffer &in)
{
    while (!in.empty() && !finished()) {
        if (in.size() < need_) return;
        if (outstanding_ == 0) {
            finish("the server sent " + std::to_string(in.size()) + " bytes nobody asked for");
            return;
        }
        std::string_view data(in.contiguous(in.size()), in.size());
        resp::Reply reply = resp::parse_reply(data);
        if (reply.outcome == resp::Reply::Outcome::Incomplete) {
            need_ = reply.need > in.size() ? reply.need : in.size() + 1;
            return;
        }
        need_ = 0;
        if (reply.outcome == resp::Reply::Outcome::Malformed) {
            ++error_replies;
            finish("malformed reply to " + std::string(to_string(test_)) + ": " + reply.problem);
            return;
        }
        const uint64_t now = monotonic_ns();
        latency_ns.record(now - batch_sent_ns_);
        end_ns = now;
        live_->operations.fetch_add(1, std::memory_order_relaxed);
        if (expected(reply)) {
            ++replies;
        } else {
            ++error_replies;
            if (first_error.empty())
                first_error = reply.type == resp::Type::Error
                                  ? "error reply to " + std::string(to_string(test_)) + ": -" + reply.text
                                  : "unexpected " + std::string(resp::to_string(reply.type)) + " reply to " +
                                        to_string(test_) +
                                        (reply.type == resp::Type::Status ? ": +" + reply.text : std::string());
        }
        in.drain(reply.length);
        if (--outstanding_ == 0) send_batch();
    }
}

} // namespace twinwire::bench
