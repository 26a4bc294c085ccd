// SPDX-License-Identifier: MIT
// Key commands: DEL, EXISTS, EXPIRE, TTL, PERSIST, DBSIZE, FLUSHALL.
#include "commands.hpp"
#include "integer_text.hpp"

#include <climits>

namespace kvd {
namespace {

std::vector<std::string_view> keys_of(const CommandContext &ctx)
{
    return std::vector<std::string_view>(ctx.args.begin() + 1, ctx.args.end());
}

void expire_in(CommandContext &ctx, long long unit_ms, const char *name)
{
    long long n = 0;
    if (!parse_integer(ctx.args[2], n)) return ctx.reply.error(errors::kNotInteger);
    // Redis refuses what would overflow once added to the clock; negative
    // values delete the key.
    if (n > LLONG_MAX / 4 / unit_ms || n < LLONG_MIN / 4 / unit_ms)
        return ctx.reply.error(std::string("ERR invalid expire time in '") + name + "' command");
    ctx.reply.integer(ctx.keyspace.expire(ctx.args[1], n * unit_ms) ? 1 : 0);
}

} // namespace

namespace cmd {

void del(CommandContext &ctx)
{
    if (ctx.args.size() == 2) ctx.reply.integer(ctx.keyspace.erase(ctx.args[1]) ? 1 : 0);
    else ctx.reply.integer(static_cast<long long>(ctx.keyspace.erase_many(keys_of(ctx))));
}

void exists(CommandContext &ctx)
{
    if (ctx.args.size() == 2) ctx.reply.integer(ctx.keyspace.exists(ctx.args[1]) ? 1 : 0);
    else ctx.reply.integer(static_cast<long long>(ctx.keyspace.count_existing(keys_of(ctx))));
}

void expire(CommandContext &ctx) { expire_in(ctx, 1000, "expire"); }
void pexpire(CommandContext &ctx) { expire_in(ctx, 1, "pexpire"); }

void ttl(CommandContext &ctx)
{
    int64_t ms = ctx.keyspace.ttl_ms(ctx.args[1]);
    ctx.reply.integer(ms < 0 ? ms : (ms + 500) / 1000); // rounded, as Redis does
}

void pttl(CommandContext &ctx) { ctx.reply.integer(ctx.keyspace.ttl_ms(ctx.args[1])); }

void persist(CommandContext &ctx) { ctx.reply.integer(ctx.keyspace.persist(ctx.args[1]) ? 1 : 0); }

void dbsize(CommandContext &ctx) { ctx.reply.integer(static_cast<long long>(ctx.keyspace.size())); }

void flushall(CommandContext &ctx)
{
    if (ctx.args.size() > 2 ||
        (ctx.args.size() == 2 && !equals_nocase(ctx.args[1], "async") && !equals_nocase(ctx.args[1], "sync")))
        return ctx.reply.error(errors::kSyntax);
    ctx.keyspace.clear();
    ctx.reply.ok();
}

} // namespace cmd
} // namespace kvd
