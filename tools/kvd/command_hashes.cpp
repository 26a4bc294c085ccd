// SPDX-License-Identifier: MIT
// Hash commands: HSET, HMSET, HGET, HGETALL, HDEL, HLEN, HEXISTS.
#include "commands.hpp"

namespace kvd {
namespace {

/// HSET and HMSET: field/value pairs into the hash; false after an error reply.
bool set_fields(CommandContext &ctx, const char *name, size_t &created)
{
    if (ctx.args.size() % 2 != 0) {
        ctx.reply.error(errors::wrong_arity(name));
        return false;
    }
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    for (size_t i = 2; i + 1 < ctx.args.size(); i += 2) pairs.emplace_back(ctx.args[i], ctx.args[i + 1]);
    Found found = ctx.keyspace.change_as<Hash>(ctx.args[1], true, [&](Hash &hash) { created = hash.set(pairs); });
    return not_wrong_type(ctx, found);
}

/// Look up one field; `use(value)` when it is there.
template <class Use> Found with_field(CommandContext &ctx, Use &&use)
{
    const std::string field(ctx.args[2]);
    return ctx.keyspace.read_as<Hash>(ctx.args[1], [&](const Hash &hash) {
        auto it = hash.fields.find(field);
        if (it != hash.fields.end()) use(it->second);
    });
}

} // namespace

namespace cmd {

void hset(CommandContext &ctx)
{
    size_t created = 0;
    if (set_fields(ctx, "hset", created)) ctx.reply.integer(static_cast<long long>(created));
}

void hmset(CommandContext &ctx)
{
    size_t created = 0;
    if (set_fields(ctx, "hmset", created)) ctx.reply.ok();
}

void hget(CommandContext &ctx)
{
    bool replied = false;
    Found found = with_field(ctx, [&](const std::string &value) {
        ctx.reply.bulk(value);
        replied = true;
    });
    if (not_wrong_type(ctx, found) && !replied) ctx.reply.null();
}

void hexists(CommandContext &ctx)
{
    bool there = false;
    Found found = with_field(ctx, [&](const std::string &) { there = true; });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(there ? 1 : 0);
}

void hgetall(CommandContext &ctx)
{
    Reply &reply = ctx.reply;
    Found found = ctx.keyspace.read_as<Hash>(ctx.args[1], [&](const Hash &hash) {
        reply.array(hash.size() * 2);
        for (const auto &f : hash.fields) {
            if (reply.overflowed()) break; // the reply limit, while building
            reply.bulk(f.first);
            reply.bulk(f.second);
        }
    });
    if (not_wrong_type(ctx, found) && found == Found::No) reply.array(0);
}

void hdel(CommandContext &ctx)
{
    const auto names = args_from(ctx, 2);
    size_t removed = 0;
    Found found = ctx.keyspace.change_as<Hash>(ctx.args[1], false, [&](Hash &hash) { removed = hash.remove(names); });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(removed));
}

void hlen(CommandContext &ctx)
{
    size_t n = 0;
    Found found = ctx.keyspace.read_as<Hash>(ctx.args[1], [&](const Hash &hash) { n = hash.size(); });
    if (not_wrong_type(ctx, found)) ctx.reply.integer(static_cast<long long>(n));
}

} // namespace cmd
} // namespace kvd
