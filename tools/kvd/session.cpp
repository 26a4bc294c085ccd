// SPDX-License-Identifier: MIT
#include "session.hpp"

#include <algorithm>

namespace kvd {
namespace {

// When a request spans the buffer's chunks, pull up this much more than it
// needs so a long line is not made contiguous byte by byte.
constexpr size_t kPullupSlack = 64u << 10;

} // namespace

Session::Session(Keyspace &keyspace, Host &host, const RequestLimits &limits, SessionCounters &counters)
    : keyspace_(keyspace), host_(host), limits_(limits), counters_(counters)
{
}

void Session::request_close(std::string reason)
{
    closing_ = true;
    close_reason_ = std::move(reason);
}

Session::Outcome Session::feed(twinwire::Buffer &input, std::string &out, size_t out_limit)
{
    Reply reply(out);
    while (!closing_ && !input.empty() && input.size() >= need_) {
        const std::string_view view = input.first_chunk();
        size_t used = 0;
        bool backlogged = false;
        uint64_t ran = 0;
        while (used < view.size()) {
            ParseResult r = parse_request(view.substr(used), limits_, request_);
            if (r.status == ParseStatus::Incomplete) {
                // It needs at least one byte more than this chunk holds of it.
                need_ = std::max(r.needed, view.size() - used + 1);
                break;
            }
            if (r.status == ParseStatus::Error) {
                reply.error("ERR " + r.error);
                protocol_error_ = true;
                counters_.protocol_errors.fetch_add(1, std::memory_order_relaxed);
                request_close(r.error);
                break;
            }
            used += r.consumed;
            need_ = 0;
            if (!request_.args.empty()) {
                CommandContext ctx{request_.args, reply, keyspace_, *this, host_};
                execute(ctx);
                ++ran;
            }
            if (closing_) break;
            if (out.size() > out_limit) {
                backlogged = true;
                break;
            }
        }
        // Arguments point into the chunk: drain only after they ran.
        input.drain(used);
        commands_ += ran;
        counters_.commands.fetch_add(ran, std::memory_order_relaxed);
        if (closing_) return Outcome::Close;
        if (backlogged) return Outcome::Backlogged;
        if (input.size() < need_) return Outcome::Idle;
        // The rest of the request is in the following chunks: join them.
        input.contiguous(std::min(input.size(), std::max(need_, view.size() - used + kPullupSlack)));
    }
    return closing_ ? Outcome::Close : Outcome::Idle;
}

} // namespace kvd
