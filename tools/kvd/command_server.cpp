// SPDX-License-Identifier: MIT
// Connection and server commands: PING, ECHO, QUIT, SELECT, CLIENT, INFO, CONFIG GET.
#include "commands.hpp"
#include "glob.hpp"
#include "session.hpp"

#include <algorithm>

namespace kvd {

namespace cmd {

void ping(CommandContext &ctx)
{
    if (ctx.args.size() > 2) return ctx.reply.error(errors::wrong_arity("ping"));
    if (ctx.args.size() == 2) ctx.reply.bulk(ctx.args[1]);
    else ctx.reply.simple("PONG");
}

void echo(CommandContext &ctx) { ctx.reply.bulk(ctx.args[1]); }

void quit(CommandContext &ctx)
{
    ctx.reply.ok();
    ctx.session.request_close("QUIT");
}

void select(CommandContext &ctx)
{
    if (ctx.args[1] != "0") return ctx.reply.error("ERR DB index is out of range");
    ctx.reply.ok();
}

void client(CommandContext &ctx)
{
    std::string_view sub = ctx.args[1];
    Session &session = ctx.session;
    if (equals_nocase(sub, "setname") && ctx.args.size() == 3) {
        for (char c : ctx.args[2])
            if (c < '!' || c > '~')
                return ctx.reply.error("ERR Client names cannot contain spaces, newlines or special characters.");
        session.name = std::string(ctx.args[2]);
        ctx.reply.ok();
    } else if (equals_nocase(sub, "getname") && ctx.args.size() == 2) {
        if (session.name.empty()) ctx.reply.null();
        else ctx.reply.bulk(session.name);
    } else if (equals_nocase(sub, "id") && ctx.args.size() == 2) {
        ctx.reply.integer(static_cast<long long>(session.id()));
    } else if (equals_nocase(sub, "setinfo") && ctx.args.size() == 4) {
        ctx.reply.ok(); // what client libraries announce (lib-name, lib-ver): accepted, not kept
    } else if (equals_nocase(sub, "setname") || equals_nocase(sub, "getname") || equals_nocase(sub, "id") ||
               equals_nocase(sub, "setinfo")) {
        ctx.reply.error(errors::wrong_arity("client|" + std::string(sub)));
    } else {
        ctx.reply.error("ERR unknown subcommand '" + std::string(sub.substr(0, 128)) +
                        "'. Try CLIENT SETNAME, GETNAME, ID or SETINFO.");
    }
}

void info(CommandContext &ctx)
{
    std::vector<std::string_view> sections(ctx.args.begin() + 1, ctx.args.end());
    ctx.reply.bulk(ctx.host.info(sections, ctx.session));
}

void config(CommandContext &ctx)
{
    if (!equals_nocase(ctx.args[1], "get")) {
        if (equals_nocase(ctx.args[1], "set"))
            return ctx.reply.error("ERR CONFIG SET is not supported: change the configuration file and restart");
        return ctx.reply.error("ERR unknown subcommand '" + std::string(ctx.args[1].substr(0, 128)) +
                               "'. Try CONFIG GET.");
    }
    if (ctx.args.size() < 3) return ctx.reply.error(errors::wrong_arity("config|get"));
    std::vector<std::pair<std::string, std::string>> matched;
    for (const auto &param : ctx.host.config_parameters()) {
        bool hit = std::any_of(ctx.args.begin() + 2, ctx.args.end(),
                               [&](std::string_view pattern) { return glob_match(pattern, param.first, true); });
        if (hit) matched.push_back(param);
    }
    ctx.reply.array(matched.size() * 2);
    for (const auto &m : matched) {
        ctx.reply.bulk(m.first);
        ctx.reply.bulk(m.second);
    }
}

} // namespace cmd
} // namespace kvd
