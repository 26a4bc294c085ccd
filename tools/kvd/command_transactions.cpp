// SPDX-License-Identifier: MIT
// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.  Session::dispatch
// queues the commands in between; EXEC runs them holding every lane of the
// keyspace's TransactionGate, so no other client's command runs among them.
#include "commands.hpp"
#include "session.hpp"

namespace kvd {
namespace cmd {

void multi(CommandContext &ctx)
{
    Transaction &tx = ctx.session.transaction();
    if (tx.active) return ctx.reply.error("ERR MULTI calls can not be nested");
    tx.active = true;
    ctx.reply.ok();
}

void discard(CommandContext &ctx)
{
    Transaction &tx = ctx.session.transaction();
    if (!tx.active) return ctx.reply.error("ERR DISCARD without MULTI");
    tx.reset();
    ctx.reply.ok();
}

void watch(CommandContext &ctx)
{
    Transaction &tx = ctx.session.transaction();
    if (tx.active) return ctx.reply.error("ERR WATCH inside MULTI is not allowed");
    for (size_t i = 1; i < ctx.args.size(); ++i) tx.watches.push_back(ctx.keyspace.watch(ctx.args[i]));
    ctx.reply.ok();
}

void unwatch(CommandContext &ctx)
{
    ctx.session.transaction().watches.clear();
    ctx.reply.ok();
}

void exec(CommandContext &ctx)
{
    Transaction &tx = ctx.session.transaction();
    if (!tx.active) return ctx.reply.error("ERR EXEC without MULTI");
    if (tx.aborted) {
        tx.reset();
        return ctx.reply.error("EXECABORT Transaction discarded because of previous errors.");
    }
    struct AllLanes {
        TransactionGate &gate;
        explicit AllLanes(TransactionGate &g) : gate(g) { gate.lock_all(); }
        ~AllLanes() { gate.unlock_all(); }
    } lanes(ctx.keyspace.gate());
    if (ctx.keyspace.changed_since(tx.watches)) {
        tx.reset();
        return ctx.reply.null_array(); // a watched key changed: nothing ran
    }
    ctx.reply.array(tx.queued.size());
    std::vector<std::string_view> args;
    for (const auto &queued : tx.queued) {
        args.assign(queued.begin(), queued.end());
        CommandContext inner{args, ctx.reply, ctx.keyspace, ctx.session, ctx.host};
        execute(inner);
    }
    tx.reset();
}

} // namespace cmd
} // namespace kvd
