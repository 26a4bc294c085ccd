// SPDX-License-Identifier: MIT
#include "session.hpp"

#include <twinwire/log.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>

namespace kvd {
namespace {

// When a request spans the buffer's chunks, pull up at least this much more
// than it needs so a long line is not made contiguous byte by byte.
constexpr size_t kPullupSlack = 64u << 10;
// Argument slots kept after a request: a huge one gives its memory back.
constexpr size_t kKeepArgs = 4096;

std::atomic<uint64_t> next_client_id{1};

/// Commands that act at once between MULTI and EXEC instead of being queued.
bool runs_inside_multi(const CommandSpec &spec)
{
    return spec.handler == cmd::exec || spec.handler == cmd::discard || spec.handler == cmd::multi ||
           spec.handler == cmd::watch || spec.handler == cmd::quit;
}

} // namespace

Session::Session(Keyspace &keyspace, Host &host, const RequestLimits &limits, SessionCounters &counters)
    : keyspace_(keyspace), host_(host), limits_(limits), counters_(counters), parser_(limits),
      id_(next_client_id.fetch_add(1, std::memory_order_relaxed))
{
}

void Session::request_close(std::string reason)
{
    closing_ = true;
    close_reason_ = std::move(reason);
}

Session::Outcome Session::feed(twinwire::Buffer &input, std::string &out, size_t out_limit)
{
    reply_start_ = out.size();
    try {
        return run(input, out, out_limit);
    } catch (const std::bad_alloc &) {
        return give_up_out_of_memory(out);
    }
}

Session::Outcome Session::feed_borrowed(std::string_view bytes, std::string &out, size_t out_limit, size_t &used)
{
    reply_start_ = out.size();
    used = 0;
    try {
        Reply reply(out);
        ViewRun r = run_view(bytes, reply, out, out_limit);
        used = r.used;
        if (closing_) return Outcome::Close;
        return r.backlogged ? Outcome::Backlogged : Outcome::Idle;
    } catch (const std::bad_alloc &) {
        return give_up_out_of_memory(out);
    }
}

Session::Outcome Session::give_up_out_of_memory(std::string &out)
{
    // std::string's append leaves the string as it was when it throws, so
    // the replies before reply_start_ are intact; shrinking never allocates.
    if (out.size() > reply_start_) out.resize(reply_start_);
    parser_.reset();
    Request().args.swap(request_.args);
    std::string().swap(request_.storage);
    transaction_.reset();
    out_of_memory_ = true;
    counters_.out_of_memory.fetch_add(1, std::memory_order_relaxed);
    request_close("out of memory while serving its request");
    try {
        Reply(out).error("ERR out of memory serving this request; closing the connection");
    } catch (const std::bad_alloc &) {
        // Not even room for the error: the close says it.
    }
    return Outcome::Close;
}

void Session::run_request(Reply &reply)
{
    std::string &out = reply.buffer();
    reply_start_ = out.size();
    reply.limit_to(reply_start_ > Reply::kUnlimited - limits_.max_reply ? Reply::kUnlimited
                                                                        : reply_start_ + limits_.max_reply);
    CommandContext ctx{request_.args, reply, keyspace_, *this, host_};
    // A reply sent from lent buffers cannot be taken back: only outside a
    // transaction, whose EXEC gathers replies it may still replace.
    reply.lend_through(transaction_.active ? nullptr : lender);
    dispatch(ctx);
    reply.lend_through(nullptr);
    if (reply.overflowed()) {
        // Stopped while it was built (at most max_reply bytes were copied):
        // the client gets an error instead, and stays connected.
        out.resize(reply_start_);
        reply.limit_to(Reply::kUnlimited);
        const CommandSpec *spec = find_command(request_.args[0]);
        const char *name = spec ? spec->name : "?";
        reply.error("ERR reply to '" + std::string(name) + "' exceeds the reply limit of " +
                    std::to_string(limits_.max_reply) + " bytes (write_buffer_limit); nothing was sent");
        counters_.replies_too_large.fetch_add(1, std::memory_order_relaxed);
        TW_WARN("kvd", "client %s: the reply to '%s' exceeds %zu bytes (write_buffer_limit); replaced by an error",
                peer.c_str(), name, limits_.max_reply);
    }
    reply.limit_to(Reply::kUnlimited);
    if (request_.args.capacity() > kKeepArgs) Request().args.swap(request_.args);
}

void Session::dispatch(CommandContext &ctx)
{
    const CommandSpec *spec = checked_command(ctx);
    if (!spec) {
        if (transaction_.active) transaction_.aborted = true; // EXEC will answer EXECABORT
        return;
    }
    if (transaction_.active && !runs_inside_multi(*spec)) {
        if (transaction_.queue(ctx.args, limits_.max_request)) return ctx.reply.simple("QUEUED");
        transaction_.aborted = true;
        return ctx.reply.error("ERR the commands queued since MULTI exceed max_request_size (" +
                               std::to_string(limits_.max_request) + " bytes)");
    }
    // EXEC takes every lane itself; every other command runs in its own.
    if (spec->handler == cmd::exec) return spec->handler(ctx);
    std::lock_guard<std::mutex> lane_lock(keyspace_.gate().lane(lane));
    spec->handler(ctx);
}

Session::Outcome Session::run(twinwire::Buffer &input, std::string &out, size_t out_limit)
{
    Reply reply(out);
    while (!closing_ && !input.empty() && input.size() >= need_) {
        const std::string_view view = input.first_chunk();
        const ViewRun r = run_view(view, reply, out, out_limit);
        // Arguments point into the chunk: drain only after they ran.
        input.drain(r.used);
        if (closing_) return Outcome::Close;
        if (r.backlogged) return Outcome::Backlogged;
        if (input.size() < need_) return Outcome::Idle;
        // The rest of the request is in the following chunks: join them,
        // at least doubling what is contiguous so a request arriving in
        // many pieces is copied a bounded number of times overall.
        const size_t have = view.size() - r.used;
        const size_t join = std::min(input.size(), std::max({need_, 2 * have, have + kPullupSlack}));
        const char *before = input.first_chunk().data();
        // Bytes copied: the rest when the first chunk had room, all when it moved.
        joined_ += input.contiguous(join) == before ? join - have : join;
    }
    return closing_ ? Outcome::Close : Outcome::Idle;
}

Session::ViewRun Session::run_view(std::string_view view, Reply &reply, std::string &out, size_t out_limit)
{
    size_t used = 0;
    bool backlogged = false;
    uint64_t ran = 0;
    while (used < view.size()) {
        // After Incomplete the parser resumes where it stopped.
        ParseResult r = parser_.parse(view.substr(used), request_);
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
            run_request(reply);
            ++ran;
        }
        if (closing_) break;
        if (out.size() > out_limit) {
            backlogged = true;
            break;
        }
    }
    commands_ += ran;
    counters_.commands.fetch_add(ran, std::memory_order_relaxed);
    return {used, backlogged};
}

} // namespace kvd
