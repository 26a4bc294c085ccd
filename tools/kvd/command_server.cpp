// SPDX-License-Identifier: MIT
// Connection and server commands: PING, ECHO, QUIT, SELECT, INFO, CONFIG GET.
#include "commands.hpp"
#include "session.hpp"

#include <algorithm>

namespace kvd {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

/// Glob match with '*' and '?', ignoring case (CONFIG GET patterns).
bool glob_match(std::string_view pattern, std::string_view text)
{
    size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || lower(pattern[p]) == lower(text[t]))) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

} // namespace

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
                               [&](std::string_view pattern) { return glob_match(pattern, param.first); });
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
