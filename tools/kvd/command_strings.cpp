// SPDX-License-Identifier: MIT
// String commands: SET, GET, STRLEN, MSET, MGET, INCR, GETSET, GETDEL, SETNX, SETEX and friends.
#include "commands.hpp"
#include "integer_text.hpp"

#include <climits>

namespace kvd {
namespace {

/// The expiry of SET, or an error reply.  Accepts what Redis accepts:
/// > 0 and small enough to add to the clock.
bool parse_ttl(CommandContext &ctx, std::string_view text, long long unit_ms, int64_t &ttl_ms,
               const char *command = "set")
{
    long long n = 0;
    if (!parse_integer(text, n)) {
        ctx.reply.error(errors::kNotInteger);
        return false;
    }
    if (n <= 0 || n > LLONG_MAX / 4 / unit_ms) {
        ctx.reply.error(std::string("ERR invalid expire time in '") + command + "' command");
        return false;
    }
    ttl_ms = n * unit_ms;
    return true;
}

void reply_incr(CommandContext &ctx, long long delta)
{
    long long result = 0;
    switch (ctx.keyspace.incr_by(ctx.args[1], delta, result)) {
    case IncrStatus::Ok:
        ctx.reply.integer(result);
        break;
    case IncrStatus::NotInteger:
        ctx.reply.error(errors::kNotInteger);
        break;
    case IncrStatus::Overflow:
        ctx.reply.error("ERR increment or decrement would overflow");
        break;
    case IncrStatus::WrongType:
        ctx.reply.error(errors::kWrongType);
        break;
    }
}

/// SETEX and PSETEX: key, time, value.
void set_expiring(CommandContext &ctx, long long unit_ms, const char *command)
{
    SetOptions opt;
    if (!parse_ttl(ctx, ctx.args[2], unit_ms, opt.ttl_ms, command)) return;
    ctx.keyspace.set(ctx.args[1], ctx.args[3], opt);
    ctx.reply.ok();
}

void reply_string(CommandContext &ctx, Found found, const std::string &value)
{
    if (!not_wrong_type(ctx, found)) return;
    if (found == Found::Yes) ctx.reply.bulk(value);
    else ctx.reply.null();
}

} // namespace

namespace cmd {

void set(CommandContext &ctx)
{
    SetOptions opt;
    bool have_expiry = false;
    const auto &a = ctx.args;
    for (size_t i = 3; i < a.size(); ++i) {
        std::string_view word = a[i];
        if (equals_nocase(word, "nx") && opt.condition != SetOptions::Condition::IfPresent) {
            opt.condition = SetOptions::Condition::IfAbsent;
        } else if (equals_nocase(word, "xx") && opt.condition != SetOptions::Condition::IfAbsent) {
            opt.condition = SetOptions::Condition::IfPresent;
        } else if (equals_nocase(word, "keepttl") && !have_expiry) {
            opt.keep_ttl = true;
        } else if ((equals_nocase(word, "ex") || equals_nocase(word, "px")) && !have_expiry && !opt.keep_ttl &&
                   i + 1 < a.size()) {
            if (!parse_ttl(ctx, a[i + 1], equals_nocase(word, "ex") ? 1000 : 1, opt.ttl_ms)) return;
            have_expiry = true;
            ++i;
        } else {
            ctx.reply.error(errors::kSyntax);
            return;
        }
    }
    if (ctx.keyspace.set(a[1], a[2], opt)) ctx.reply.ok();
    else ctx.reply.null();
}

void get(CommandContext &ctx)
{
    Reply &reply = ctx.reply;
    Found found = ctx.keyspace.read(ctx.args[1], [&reply](std::string_view value) { reply.whole_bulk(value); });
    if (found == Found::No) reply.null();
    else not_wrong_type(ctx, found);
}

void strlen(CommandContext &ctx)
{
    size_t length = 0;
    Found found = ctx.keyspace.read(ctx.args[1], [&length](std::string_view value) { length = value.size(); });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(length)); // 0 when missing
}

void getset(CommandContext &ctx)
{
    std::string old;
    reply_string(ctx, ctx.keyspace.replace(ctx.args[1], ctx.args[2], old), old);
}

void getdel(CommandContext &ctx)
{
    std::string value;
    reply_string(ctx, ctx.keyspace.take(ctx.args[1], value), value);
}

void setnx(CommandContext &ctx)
{
    SetOptions opt;
    opt.condition = SetOptions::Condition::IfAbsent;
    ctx.reply.integer(ctx.keyspace.set(ctx.args[1], ctx.args[2], opt) ? 1 : 0);
}

void setex(CommandContext &ctx) { set_expiring(ctx, 1000, "setex"); }
void psetex(CommandContext &ctx) { set_expiring(ctx, 1, "psetex"); }

void mset(CommandContext &ctx)
{
    if (ctx.args.size() % 2 != 1) {
        ctx.reply.error(errors::wrong_arity("mset"));
        return;
    }
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    pairs.reserve(ctx.args.size() / 2);
    for (size_t i = 1; i + 1 < ctx.args.size(); i += 2) pairs.emplace_back(ctx.args[i], ctx.args[i + 1]);
    ctx.keyspace.set_many(pairs);
    ctx.reply.ok();
}

void mget(CommandContext &ctx)
{
    std::vector<std::string_view> keys(ctx.args.begin() + 1, ctx.args.end());
    Reply &reply = ctx.reply;
    reply.array(keys.size());
    ctx.keyspace.read_many(keys, [&reply](const std::string_view *value) {
        if (value) reply.bulk(*value);
        else reply.null();
    });
}

void incr(CommandContext &ctx) { reply_incr(ctx, 1); }
void decr(CommandContext &ctx) { reply_incr(ctx, -1); }

void incrby(CommandContext &ctx)
{
    long long delta = 0;
    if (!parse_integer(ctx.args[2], delta)) return ctx.reply.error(errors::kNotInteger);
    reply_incr(ctx, delta);
}

void decrby(CommandContext &ctx)
{
    long long delta = 0;
    if (!parse_integer(ctx.args[2], delta)) return ctx.reply.error(errors::kNotInteger);
    if (delta == LLONG_MIN) return ctx.reply.error("ERR decrement would overflow");
    reply_incr(ctx, -delta);
}

} // namespace cmd
} // namespace kvd
