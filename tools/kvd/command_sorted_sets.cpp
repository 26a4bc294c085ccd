// SPDX-License-Identifier: MIT
// Sorted set commands: ZADD, ZPOPMIN, ZRANGE, ZCARD, ZSCORE, ZREM, in their
// basic forms.
#include "commands.hpp"
#include "integer_text.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iterator>

namespace kvd {
namespace {

constexpr const char *kNotFloat = "ERR value is not a valid float";

/// A score as redis-server 7 reads one (getDoubleFromObject): what strtod
/// takes whole, not led by white space, not NaN, and in range: "inf" is a
/// score, 1e400 (HUGE_VAL with ERANGE) and 1e-400 (0 with ERANGE) are not;
/// a subnormal (ERANGE, not 0) is kept.
bool parse_score(std::string_view text, double &out)
{
    if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
    const std::string copy(text);
    char *end = nullptr;
    errno = 0;
    out = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || std::isnan(out)) return false;
    return !(errno == ERANGE && (std::isinf(out) || out == 0));
}

void score_pairs(Reply &reply, const SortedSet &zset, size_t first, size_t last, bool with_scores)
{
    auto it = zset.order.begin();
    std::advance(it, static_cast<long>(first));
    reply.array((last - first) * (with_scores ? 2 : 1));
    for (size_t i = first; i < last && !reply.overflowed(); ++i, ++it) {
        reply.bulk(it->second);
        if (with_scores) reply.score(it->first);
    }
}

} // namespace

namespace cmd {

void zadd(CommandContext &ctx)
{
    static const char *const options[] = {"nx", "xx", "gt", "lt", "ch", "incr"};
    for (const char *o : options)
        if (equals_nocase(ctx.args[2], o))
            return ctx.reply.error("ERR ZADD options (NX, XX, GT, LT, CH, INCR) are not supported by twinwire-kvd");
    if (ctx.args.size() % 2 != 0) return ctx.reply.error(errors::kSyntax);
    std::vector<std::pair<double, std::string_view>> entries;
    for (size_t i = 2; i + 1 < ctx.args.size(); i += 2) {
        double score = 0;
        if (!parse_score(ctx.args[i], score)) return ctx.reply.error(kNotFloat);
        entries.emplace_back(score, ctx.args[i + 1]);
    }
    size_t added = 0;
    Found found =
        ctx.keyspace.change_as<SortedSet>(ctx.args[1], true, [&](SortedSet &zset) { added = zset.add(entries); });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(added));
}

void zpopmin(CommandContext &ctx)
{
    if (ctx.args.size() > 3) return ctx.reply.error(errors::kSyntax);
    long long count = 1;
    if (ctx.args.size() == 3 && (!parse_integer(ctx.args[2], count) || count < 0))
        return ctx.reply.error(errors::kNotPositive);
    Reply &reply = ctx.reply;
    Found found = ctx.keyspace.change_as<SortedSet>(ctx.args[1], false, [&](SortedSet &zset) {
        const size_t n = std::min(zset.size(), static_cast<size_t>(count));
        score_pairs(reply, zset, 0, n, true);
        if (reply.overflowed()) return; // only a reply built whole takes the members away
        for (size_t i = 0; i < n; ++i) zset.pop_min();
    });
    if (not_wrong_type(ctx, found) && found == Found::No) reply.array(0);
}

void zrange(CommandContext &ctx)
{
    bool with_scores = false;
    for (size_t i = 4; i < ctx.args.size(); ++i) {
        if (!equals_nocase(ctx.args[i], "withscores"))
            return ctx.reply.error("ERR ZRANGE takes only start stop [WITHSCORES] in twinwire-kvd");
        with_scores = true;
    }
    long long start = 0, stop = 0;
    if (!parse_integer(ctx.args[2], start) || !parse_integer(ctx.args[3], stop))
        return ctx.reply.error(errors::kNotInteger);
    Reply &reply = ctx.reply;
    Found found = ctx.keyspace.read_as<SortedSet>(ctx.args[1], [&](const SortedSet &zset) {
        const long long n = static_cast<long long>(zset.size());
        if (start < 0) start = std::max(start + n, 0LL);
        if (stop < 0) stop += n;
        if (stop >= n) stop = n - 1;
        if (start > stop || start >= n) return reply.array(0);
        score_pairs(reply, zset, static_cast<size_t>(start), static_cast<size_t>(stop) + 1, with_scores);
    });
    if (not_wrong_type(ctx, found) && found == Found::No) reply.array(0);
}

void zcard(CommandContext &ctx)
{
    size_t n = 0;
    Found found = ctx.keyspace.read_as<SortedSet>(ctx.args[1], [&](const SortedSet &zset) { n = zset.size(); });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(n));
}

void zscore(CommandContext &ctx)
{
    const std::string member(ctx.args[2]);
    bool replied = false;
    Found found = ctx.keyspace.read_as<SortedSet>(ctx.args[1], [&](const SortedSet &zset) {
        auto it = zset.scores.find(member);
        if (it == zset.scores.end()) return;
        ctx.reply.score(it->second);
        replied = true;
    });
    if (not_wrong_type(ctx, found) && !replied) ctx.reply.null();
}

void zrem(CommandContext &ctx)
{
    const auto members = args_from(ctx, 2);
    size_t removed = 0;
    Found found =
        ctx.keyspace.change_as<SortedSet>(ctx.args[1], false, [&](SortedSet &zset) { removed = zset.remove(members); });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(removed));
}

} // namespace cmd
} // namespace kvd
