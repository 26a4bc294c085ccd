// SPDX-License-Identifier: MIT
// A session with a keyspace on a clock the test moves, and a host with
// fixed answers: the daemon's protocol and commands without a network.
#pragma once

#include "commands.hpp"
#include "keyspace.hpp"
#include "session.hpp"

#include <twinwire/buffer.hpp>

#include "bench/resp_reply.hpp"

#include <initializer_list>
#include <string>
#include <vector>

namespace kvd_test {

// Replies are read with twinwire-bench's strict parser (tools/bench).
using twinwire::bench::resp::parse_all;
using twinwire::bench::resp::Value;

// What a reply must be, for CHECK: type and text (or number) at once.
inline bool is_ok(const Value &v) { return v.type == Value::Type::Status && v.text == "OK"; }
inline bool is_int(const Value &v, long long n) { return v.type == Value::Type::Integer && v.integer == n; }
inline bool is_bulk(const Value &v, const std::string &s) { return v.type == Value::Type::Bulk && v.text == s; }
inline bool is_error(const Value &v, const std::string &text) { return v.type == Value::Type::Error && v.text == text; }

class ManualClock : public kvd::Clock {
public:
    int64_t now_ms() const override { return now; }
    int64_t now = 1000000;
};

class FixedHost : public kvd::Host {
public:
    std::string info(const std::vector<std::string_view> &sections, const kvd::Session &) override
    {
        std::string text = "# Fixed\r\nsections:" + std::to_string(sections.size()) + "\r\n";
        return text;
    }
    std::vector<std::pair<std::string, std::string>> config_parameters() override
    {
        return {{"save", ""}, {"appendonly", "no"}, {"port", "7379"}};
    }
};

/// "*3\r\n$3\r\nSET\r\n..." for these words.
inline std::string encode(const std::vector<std::string> &words)
{
    std::string out = "*" + std::to_string(words.size()) + "\r\n";
    for (const std::string &w : words) out += "$" + std::to_string(w.size()) + "\r\n" + w + "\r\n";
    return out;
}

struct SessionFixture {
    /// Every fixture's SPOP picks alike, so two runs of one input compare.
    static constexpr uint64_t kRandomSeed = 1;
    explicit SessionFixture(kvd::RequestLimits limits = {}, uint64_t random_seed = kRandomSeed)
        : keyspace(clock, random_seed), session(keyspace, host, limits, counters)
    {
    }

    /// Feed raw bytes (all at once) and return the raw replies.
    std::string feed(const std::string &bytes)
    {
        input.append(bytes);
        return drain_replies();
    }

    /// Run replies out of whatever is in `input` (Backlogged is resumed at once).
    std::string drain_replies(size_t out_limit = 1u << 20)
    {
        std::string out;
        for (;;) {
            outcome = session.feed(input, out, out_limit);
            if (outcome != kvd::Session::Outcome::Backlogged) break;
        }
        return out;
    }

    /// One command, one parsed reply.
    Value call(std::initializer_list<std::string> words)
    {
        std::string raw = feed(encode(std::vector<std::string>(words)));
        std::vector<Value> replies;
        if (!parse_all(raw, replies) || replies.size() != 1) {
            Value bad;
            bad.type = Value::Type::Error;
            bad.text = "TEST: expected exactly one well-formed reply, got: " + raw;
            return bad;
        }
        return replies[0];
    }

    ManualClock clock;
    FixedHost host;
    kvd::SessionCounters counters;
    kvd::Keyspace keyspace;
    kvd::Session session;
    twinwire::Buffer input;
    kvd::Session::Outcome outcome = kvd::Session::Outcome::Idle;
};

} // namespace kvd_test
