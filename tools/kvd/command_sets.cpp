// SPDX-License-Identifier: MIT
// Set commands: SADD, SREM, SPOP, SMEMBERS, SISMEMBER, SCARD.
#include "commands.hpp"
#include "integer_text.hpp"

#include <random>

namespace kvd {
namespace {

void members_reply(Reply &reply, const Set &set)
{
    reply.array(set.size());
    for (const std::string &m : set.members) {
        if (reply.overflowed()) break; // the reply limit, while building
        reply.bulk(m);
    }
}

} // namespace

namespace cmd {

void sadd(CommandContext &ctx)
{
    const auto values = args_from(ctx, 2);
    size_t added = 0;
    Found found = ctx.keyspace.change_as<Set>(ctx.args[1], true, [&](Set &set) { added = set.add(values); });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(added));
}

void srem(CommandContext &ctx)
{
    const auto values = args_from(ctx, 2);
    size_t removed = 0;
    Found found = ctx.keyspace.change_as<Set>(ctx.args[1], false, [&](Set &set) { removed = set.remove(values); });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(removed));
}

void spop(CommandContext &ctx)
{
    if (ctx.args.size() > 3) return ctx.reply.error(errors::wrong_arity("spop"));
    const bool with_count = ctx.args.size() == 3;
    long long count = 1;
    if (with_count && (!parse_integer(ctx.args[2], count) || count < 0)) return ctx.reply.error(errors::kNotPositive);
    Reply &reply = ctx.reply;
    Found found = ctx.keyspace.change_as<Set>(ctx.args[1], false, [&](Set &set, std::minstd_rand &random) {
        if (with_count && static_cast<unsigned long long>(count) >= set.size()) {
            members_reply(reply, set);
            if (!reply.overflowed()) set.members.clear();
            return;
        }
        set.compact();
        // Take the members out, reply, and put them back if the reply did not fit.
        std::vector<std::unordered_set<std::string>::node_type> taken;
        taken.reserve(static_cast<size_t>(count));
        while (taken.size() < static_cast<size_t>(count)) taken.push_back(set.pop_random(random));
        if (with_count) reply.array(taken.size());
        for (auto &node : taken) reply.bulk(node.value());
        if (reply.overflowed())
            for (auto &node : taken) set.members.insert(std::move(node));
    });
    if (!not_wrong_type(ctx, found) || found == Found::Yes) return;
    if (with_count) reply.array(0);
    else reply.null();
}

void smembers(CommandContext &ctx)
{
    Reply &reply = ctx.reply;
    Found found = ctx.keyspace.read_as<Set>(ctx.args[1], [&](const Set &set) { members_reply(reply, set); });
    if (not_wrong_type(ctx, found) && found == Found::No) reply.array(0);
}

void sismember(CommandContext &ctx)
{
    bool member = false;
    const std::string wanted(ctx.args[2]);
    Found found =
        ctx.keyspace.read_as<Set>(ctx.args[1], [&](const Set &set) { member = set.members.count(wanted) > 0; });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(member ? 1 : 0);
}

void scard(CommandContext &ctx)
{
    size_t n = 0;
    Found found = ctx.keyspace.read_as<Set>(ctx.args[1], [&](const Set &set) { n = set.size(); });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(n));
}

} // namespace cmd
} // namespace kvd
