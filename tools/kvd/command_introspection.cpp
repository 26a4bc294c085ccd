// SPDX-License-Identifier: MIT
// COMMAND, COMMAND COUNT / LIST / INFO / DOCS: what redis-cli asks to build
// its help and hints (in the Redis 7 reply shapes).
#include "commands.hpp"

namespace kvd {
namespace {

void status_list(Reply &reply, const std::vector<const char *> &words)
{
    reply.array(words.size());
    for (const char *w : words) reply.simple(w);
}

void command_info(Reply &reply, const CommandSpec &c)
{
    reply.array(10);
    reply.bulk(c.name);
    reply.integer(c.arity);
    status_list(reply, c.flags);
    reply.integer(c.first_key);
    reply.integer(c.last_key);
    reply.integer(c.key_step);
    status_list(reply, c.categories);
    reply.array(0); // tips
    reply.array(0); // key specifications
    reply.array(0); // subcommands
}

void argument_doc(Reply &reply, const ArgDoc &a)
{
    std::vector<const char *> flags;
    if (a.optional) flags.push_back("optional");
    if (a.multiple) flags.push_back("multiple");
    size_t fields = 2 + (a.token ? 1 : 0) + (flags.empty() ? 0 : 1) + (a.children.empty() ? 0 : 1);
    reply.array(fields * 2);
    reply.bulk("name");
    reply.bulk(a.name);
    reply.bulk("type");
    reply.bulk(a.type);
    if (a.token) {
        reply.bulk("token");
        reply.bulk(a.token);
    }
    if (!flags.empty()) {
        reply.bulk("flags");
        status_list(reply, flags);
    }
    if (!a.children.empty()) {
        reply.bulk("arguments");
        reply.array(a.children.size());
        for (const ArgDoc &child : a.children) argument_doc(reply, child);
    }
}

void command_docs(Reply &reply, const CommandSpec &c)
{
    reply.bulk(c.name);
    reply.array(c.arguments.empty() ? 6 : 8);
    reply.bulk("summary");
    reply.bulk(c.summary);
    reply.bulk("since");
    reply.bulk(c.since);
    reply.bulk("group");
    reply.bulk(c.group);
    if (c.arguments.empty()) return;
    reply.bulk("arguments");
    reply.array(c.arguments.size());
    for (const ArgDoc &a : c.arguments) argument_doc(reply, a);
}

/// The commands named in args[2..], or all of them when none is named.
std::vector<const CommandSpec *> selected(const CommandContext &ctx, bool keep_unknown)
{
    std::vector<const CommandSpec *> out;
    if (ctx.args.size() <= 2) {
        for (const CommandSpec &c : command_table()) out.push_back(&c);
        return out;
    }
    for (size_t i = 2; i < ctx.args.size(); ++i) {
        const CommandSpec *c = find_command(ctx.args[i]);
        if (c || keep_unknown) out.push_back(c);
    }
    return out;
}

} // namespace

namespace cmd {

void command(CommandContext &ctx)
{
    Reply &reply = ctx.reply;
    const auto &table = command_table();
    if (ctx.args.size() == 1) {
        reply.array(table.size());
        for (const CommandSpec &c : table) command_info(reply, c);
        return;
    }
    std::string_view sub = ctx.args[1];
    if (equals_nocase(sub, "count") && ctx.args.size() == 2) {
        reply.integer(static_cast<long long>(table.size()));
    } else if (equals_nocase(sub, "list") && ctx.args.size() == 2) {
        reply.array(table.size());
        for (const CommandSpec &c : table) reply.bulk(c.name);
    } else if (equals_nocase(sub, "info")) {
        auto specs = selected(ctx, true);
        reply.array(specs.size());
        for (const CommandSpec *c : specs) {
            if (c) command_info(reply, *c);
            else reply.null();
        }
    } else if (equals_nocase(sub, "docs")) {
        auto specs = selected(ctx, false);
        reply.array(specs.size() * 2);
        for (const CommandSpec *c : specs) command_docs(reply, *c);
    } else if (equals_nocase(sub, "count") || equals_nocase(sub, "list")) {
        reply.error(errors::wrong_arity(std::string("command|") + std::string(sub)));
    } else {
        reply.error("ERR unknown subcommand '" + std::string(sub.substr(0, 128)) +
                    "'. Try COMMAND COUNT, DOCS, INFO or LIST.");
    }
}

} // namespace cmd
} // namespace kvd
