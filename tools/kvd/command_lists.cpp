// SPDX-License-Identifier: MIT
// List commands: LPUSH, RPUSH, LPOP, RPOP, LRANGE, LLEN.
#include "commands.hpp"
#include "integer_text.hpp"

#include <algorithm>

namespace kvd {
namespace {

void push(CommandContext &ctx, bool at_head)
{
    const auto values = args_from(ctx, 2);
    size_t length = 0;
    Found found = ctx.keyspace.change_as<List>(ctx.args[1], true, [&](List &list) {
        list.push(values, at_head);
        length = list.size();
    });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(length));
}

void pop(CommandContext &ctx, bool at_head)
{
    const char *name = at_head ? "lpop" : "rpop";
    if (ctx.args.size() > 3) return ctx.reply.error(errors::wrong_arity(name));
    const bool with_count = ctx.args.size() == 3;
    long long count = 1;
    if (with_count && (!parse_integer(ctx.args[2], count) || count < 0)) return ctx.reply.error(errors::kNotPositive);
    Reply &reply = ctx.reply;
    Found found = ctx.keyspace.change_as<List>(ctx.args[1], false, [&](List &list) {
        const size_t n = std::min(list.size(), static_cast<size_t>(count));
        if (with_count) reply.array(n);
        for (size_t i = 0; i < n && !reply.overflowed(); ++i) reply.bulk(list.items[at_head ? i : list.size() - 1 - i]);
        // Only a reply that was built whole takes the elements away.
        if (reply.overflowed()) return;
        for (size_t i = 0; i < n; ++i) {
            if (at_head) list.items.pop_front();
            else list.items.pop_back();
        }
    });
    if (!not_wrong_type(ctx, found)) return;
    if (found == Found::No) {
        if (with_count) reply.null_array();
        else reply.null();
    }
}

} // namespace

namespace cmd {

void lpush(CommandContext &ctx) { push(ctx, true); }
void rpush(CommandContext &ctx) { push(ctx, false); }
void lpop(CommandContext &ctx) { pop(ctx, true); }
void rpop(CommandContext &ctx) { pop(ctx, false); }

void lrange(CommandContext &ctx)
{
    long long start = 0, stop = 0;
    if (!parse_integer(ctx.args[2], start) || !parse_integer(ctx.args[3], stop))
        return ctx.reply.error(errors::kNotInteger);
    Reply &reply = ctx.reply;
    Found found = ctx.keyspace.read_as<List>(ctx.args[1], [&](const List &list) {
        size_t first = 0, last = 0;
        if (!list.range(start, stop, first, last)) return reply.array(0);
        reply.array(last - first);
        // Stops at the reply limit: a hostile LRANGE 0 -1 builds no more than the limit.
        for (size_t i = first; i < last && !reply.overflowed(); ++i) reply.bulk(list.items[i]);
    });
    if (not_wrong_type(ctx, found) && found == Found::No) reply.array(0);
}

void llen(CommandContext &ctx)
{
    size_t n = 0;
    Found found = ctx.keyspace.read_as<List>(ctx.args[1], [&](const List &list) { n = list.size(); });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(n));
}

} // namespace cmd
} // namespace kvd
