// SPDX-License-Identifier: MIT
// Key commands: DEL, UNLINK, EXISTS, EXPIRE, TTL, PERSIST, TYPE, KEYS, SCAN,
// DBSIZE, FLUSHALL.
#include "commands.hpp"
#include "glob.hpp"
#include "integer_text.hpp"

#include <algorithm>
#include <charconv>
#include <climits>

namespace kvd {
namespace {

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

/// What one key costs in a reply, at most: "$<len>\r\n<key>\r\n".
size_t reply_bytes(std::string_view key) { return key.size() + 26; }

/// SCAN's options; false after an error reply.
struct ScanOptions {
    uint64_t cursor = 0;
    std::string_view match = "*";
    size_t count = 10;
    std::string_view type;
};

bool parse_scan(CommandContext &ctx, ScanOptions &o)
{
    std::string_view c = ctx.args[1];
    auto res = std::from_chars(c.data(), c.data() + c.size(), o.cursor);
    if (c.empty() || res.ec != std::errc() || res.ptr != c.data() + c.size()) {
        ctx.reply.error("ERR invalid cursor");
        return false;
    }
    for (size_t i = 2; i < ctx.args.size(); i += 2) {
        if (i + 1 >= ctx.args.size()) {
            ctx.reply.error(errors::kSyntax);
            return false;
        }
        std::string_view word = ctx.args[i], value = ctx.args[i + 1];
        long long n = 0;
        if (equals_nocase(word, "match")) {
            o.match = value;
        } else if (equals_nocase(word, "type")) {
            o.type = value;
        } else if (equals_nocase(word, "count")) {
            if (!parse_integer(value, n)) {
                ctx.reply.error(errors::kNotInteger);
                return false;
            }
            if (n < 1) {
                ctx.reply.error(errors::kSyntax);
                return false;
            }
            o.count = static_cast<size_t>(n);
        } else {
            ctx.reply.error(errors::kSyntax);
            return false;
        }
    }
    return true;
}

} // namespace

namespace cmd {

void keys(CommandContext &ctx)
{
    std::string_view pattern = ctx.args[1];
    std::vector<std::string> found;
    size_t bytes = 0;
    bool fits = true;
    ctx.keyspace.for_each_key([&](std::string_view key) {
        if (!glob_match(pattern, key)) return true;
        bytes += reply_bytes(key);
        // Stop at the reply limit while gathering: KEYS * on a huge keyspace
        // copies no more than the limit (fits() marks the reply overflowed).
        fits = ctx.reply.fits(bytes);
        if (fits) found.emplace_back(key);
        return fits;
    });
    if (!fits) return;
    ctx.reply.array(found.size());
    for (const std::string &k : found) ctx.reply.bulk(k);
}

void scan(CommandContext &ctx)
{
    ScanOptions o;
    if (!parse_scan(ctx, o)) return;
    std::vector<ScannedKey> keys;
    size_t examined = 0, bytes = 0;
    // In slices, so a huge COUNT gathers no more than the reply limit.
    do {
        std::vector<ScannedKey> slice;
        o.cursor = ctx.keyspace.scan(o.cursor, std::min<size_t>(o.count - examined, 1024), slice);
        examined += slice.size();
        for (ScannedKey &k : slice) {
            if (!o.type.empty() && !equals_nocase(o.type, k.type)) continue;
            if (!glob_match(o.match, k.name)) continue;
            bytes += reply_bytes(k.name);
            if (!ctx.reply.fits(bytes)) return;
            keys.push_back(std::move(k));
        }
        if (slice.empty()) break;
    } while (o.cursor != 0 && examined < o.count);
    ctx.reply.array(2);
    ctx.reply.bulk(std::to_string(o.cursor));
    ctx.reply.array(keys.size());
    for (const ScannedKey &k : keys) ctx.reply.bulk(k.name);
}

void type(CommandContext &ctx) { ctx.reply.simple(ctx.keyspace.type_of(ctx.args[1])); }

void del(CommandContext &ctx)
{
    if (ctx.args.size() == 2) ctx.reply.integer(ctx.keyspace.erase(ctx.args[1]) ? 1 : 0);
    else ctx.reply.integer(static_cast<long long>(ctx.keyspace.erase_many(args_from(ctx, 1))));
}

void exists(CommandContext &ctx)
{
    if (ctx.args.size() == 2) ctx.reply.integer(ctx.keyspace.exists(ctx.args[1]) ? 1 : 0);
    else ctx.reply.integer(static_cast<long long>(ctx.keyspace.count_existing(args_from(ctx, 1))));
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
