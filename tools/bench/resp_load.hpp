// SPDX-License-Identifier: MIT
// The RESP load mode: N clients send pipelined SET / GET requests with
// random keys, like redis-benchmark, and check every reply strictly.
#pragma once

#include "histogram.hpp"
#include "options.hpp"
#include "phase.hpp"
#include "resp_reply.hpp"

#include <atomic>
#include <memory>
#include <string>

namespace twinwire::bench {

/// Requests still to be sent in one test, shared by all its clients.
struct RequestPool {
    explicit RequestPool(uint64_t total) : left(total) {}
    /// Take up to `want` requests; returns how many were taken.
    uint64_t take(uint64_t want);
    std::atomic<uint64_t> left;
};

/// One RESP2 command as an array of bulk strings.
std::string resp_command(std::initializer_list<std::string_view> words);
/// "key:000000001234", as redis-benchmark names keys with -r ("counter:..." for INCR).
std::string resp_key(uint64_t n, const char *prefix = "key");
/// Keys one MGET asks for, as redis-benchmark's MSET test writes ten.
constexpr unsigned kMgetKeys = 10;

class RespWorker : public Worker {
public:
    RespWorker(RespTest test, const RespOptions &options, std::shared_ptr<RequestPool> pool, uint64_t seed);

    void begin() override;
    void on_data(Buffer &in) override;

    Histogram latency_ns;       ///< per request, from its batch's write to its reply
    uint64_t replies = 0;       ///< well-formed replies of the expected type
    uint64_t error_replies = 0; ///< error replies and replies of the wrong type
    std::string first_error;    ///< the first of those, for the report

private:
    void send_batch();
    uint64_t next_random();
    /// One request of this test, with fresh random keys.
    std::string request();
    /// Whether `reply` is the kind of reply this test's command gets.
    bool expected(const resp::Reply &reply) const;

    RespTest test_;
    unsigned pipeline_;
    uint64_t keyspace_;
    std::string value_;
    std::shared_ptr<RequestPool> pool_;
    uint64_t random_;
    uint64_t outstanding_ = 0;
    uint64_t batch_sent_ns_ = 0;
    size_t need_ = 0; ///< bytes the next reply needs before parsing is worth it
    std::string batch_;
};

} // namespace twinwire::bench
