// SPDX-License-Identifier: MIT
// MEMORY USAGE and OBJECT FREQ: what redis-cli's --memkeys and --hotkeys ask
// about each key.
#include "commands.hpp"
#include "integer_text.hpp"
#include "memory_usage.hpp"

namespace kvd {
namespace {

// Redis' words when no LFU maxmemory policy is set; kvd has no eviction
// (INFO: maxmemory_policy:noeviction), so it never counts accesses, and
// redis-cli --hotkeys reports this as it does for such a redis-server.
constexpr const char *kNoLfuPolicy =
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching "
    "between policies at runtime LRU and LFU data will take some time to adjust.";

void unknown_subcommand(CommandContext &ctx, const char *command, const char *known)
{
    ctx.reply.error("ERR unknown subcommand '" + std::string(ctx.args[1].substr(0, 128)) + "'. twinwire-kvd's " +
                    command + " has " + known + ".");
}

/// MEMORY USAGE key [SAMPLES count]
void memory_usage_of(CommandContext &ctx)
{
    size_t samples = 5; // Redis' default
    for (size_t i = 3; i < ctx.args.size(); i += 2) {
        long long n = 0;
        if (!equals_nocase(ctx.args[i], "samples") || i + 1 >= ctx.args.size()) return ctx.reply.error(errors::kSyntax);
        if (!parse_integer(ctx.args[i + 1], n)) return ctx.reply.error(errors::kNotInteger);
        if (n < 0) return ctx.reply.error(errors::kSyntax);
        samples = static_cast<size_t>(n); // 0: every element, as in Redis
    }
    size_t bytes = 0;
    if (ctx.keyspace.inspect(ctx.args[2], [&](const Item &item) { bytes = memory_usage(item, samples); }))
        ctx.reply.integer(static_cast<long long>(bytes));
    else ctx.reply.null();
}

} // namespace

namespace cmd {

void memory(CommandContext &ctx)
{
    if (!equals_nocase(ctx.args[1], "usage")) return unknown_subcommand(ctx, "MEMORY", "USAGE only");
    if (ctx.args.size() < 3) return ctx.reply.error(errors::wrong_arity("memory|usage"));
    memory_usage_of(ctx);
}

void object(CommandContext &ctx)
{
    if (!equals_nocase(ctx.args[1], "freq")) return unknown_subcommand(ctx, "OBJECT", "FREQ only");
    if (ctx.args.size() != 3) return ctx.reply.error(errors::wrong_arity("object|freq"));
    // A missing key answers nil before the policy is looked at, as in Redis.
    if (ctx.keyspace.inspect(ctx.args[2], [](const Item &) {})) ctx.reply.error(kNoLfuPolicy);
    else ctx.reply.null();
}

} // namespace cmd
} // namespace kvd
