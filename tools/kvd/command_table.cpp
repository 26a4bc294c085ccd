// SPDX-License-Identifier: MIT
// The command table (with what COMMAND and COMMAND DOCS report) and dispatch.
#include "commands.hpp"
#include "session.hpp"

#include <unordered_map>

namespace kvd {
namespace {

ArgDoc key(const char *name = "key") { return {name, "key", nullptr, false, false, {}}; }
ArgDoc keys() { return {"key", "key", nullptr, false, true, {}}; }
ArgDoc string(const char *name, bool optional = false) { return {name, "string", nullptr, optional, false, {}}; }
ArgDoc integer(const char *name, const char *token = nullptr)
{
    return {name, "integer", token, false, false, {}};
}
ArgDoc token(const char *word) { return {word, "pure-token", word, false, false, {}}; }

std::vector<CommandSpec> build_table()
{
    using V = std::vector<const char *>;
    return {
        {"ping", -1, V{"fast"}, 0, 0, 0, V{"@fast", "@connection"}, "connection", "Returns the server's liveliness response.",
         "1.0.0", {string("message", true)}, cmd::ping},
        {"echo", 2, V{"fast"}, 0, 0, 0, V{"@fast", "@connection"}, "connection", "Returns the given string.", "1.0.0",
         {string("message")}, cmd::echo},
        {"quit", -1, V{"fast", "noscript"}, 0, 0, 0, V{"@fast", "@connection"}, "connection",
         "Closes the connection.", "1.0.0", {}, cmd::quit},
        {"select", 2, V{"loading", "stale", "fast"}, 0, 0, 0, V{"@fast", "@connection"}, "connection",
         "Changes the selected database (only 0 exists).", "1.0.0", {integer("index")}, cmd::select},
        {"set", -3, V{"write", "denyoom"}, 1, 1, 1, V{"@write", "@string", "@slow"}, "string",
         "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", "1.0.0",
         {key(), string("value"),
          {"condition", "oneof", nullptr, true, false, {token("NX"), token("XX")}},
          {"expiration", "oneof", nullptr, true, false,
           {integer("seconds", "EX"), integer("milliseconds", "PX"), token("KEEPTTL")}}},
         cmd::set},
        {"get", 2, V{"readonly", "fast"}, 1, 1, 1, V{"@read", "@string", "@fast"}, "string",
         "Returns the string value of a key.", "1.0.0", {key()}, cmd::get},
        {"mset", -3, V{"write", "denyoom"}, 1, -1, 2, V{"@write", "@string", "@slow"}, "string",
         "Atomically creates or modifies the string values of one or more keys.", "1.0.1",
         {{"data", "block", nullptr, false, true, {key(), string("value")}}}, cmd::mset},
        {"mget", -2, V{"readonly", "fast"}, 1, -1, 1, V{"@read", "@string", "@fast"}, "string",
         "Atomically returns the string values of one or more keys.", "1.0.0", {keys()}, cmd::mget},
        {"incr", 2, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@string", "@fast"}, "string",
         "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.",
         "1.0.0", {key()}, cmd::incr},
        {"decr", 2, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@string", "@fast"}, "string",
         "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.",
         "1.0.0", {key()}, cmd::decr},
        {"incrby", 3, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@string", "@fast"}, "string",
         "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.",
         "1.0.0", {key(), integer("increment")}, cmd::incrby},
        {"decrby", 3, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@string", "@fast"}, "string",
         "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.",
         "1.0.0", {key(), integer("decrement")}, cmd::decrby},
        {"del", -2, V{"write"}, 1, -1, 1, V{"@keyspace", "@write", "@slow"}, "generic",
         "Deletes one or more keys.", "1.0.0", {keys()}, cmd::del},
        {"exists", -2, V{"readonly", "fast"}, 1, -1, 1, V{"@keyspace", "@read", "@fast"}, "generic",
         "Determines whether one or more keys exist.", "1.0.0", {keys()}, cmd::exists},
        {"expire", 3, V{"write", "fast"}, 1, 1, 1, V{"@keyspace", "@write", "@fast"}, "generic",
         "Sets the expiration time of a key in seconds.", "1.0.0", {key(), integer("seconds")}, cmd::expire},
        {"pexpire", 3, V{"write", "fast"}, 1, 1, 1, V{"@keyspace", "@write", "@fast"}, "generic",
         "Sets the expiration time of a key in milliseconds.", "2.6.0", {key(), integer("milliseconds")},
         cmd::pexpire},
        {"ttl", 2, V{"readonly", "fast"}, 1, 1, 1, V{"@keyspace", "@read", "@fast"}, "generic",
         "Returns the expiration time in seconds of a key.", "1.0.0", {key()}, cmd::ttl},
        {"pttl", 2, V{"readonly", "fast"}, 1, 1, 1, V{"@keyspace", "@read", "@fast"}, "generic",
         "Returns the expiration time in milliseconds of a key.", "2.6.0", {key()}, cmd::pttl},
        {"persist", 2, V{"write", "fast"}, 1, 1, 1, V{"@keyspace", "@write", "@fast"}, "generic",
         "Removes the expiration time of a key.", "2.2.0", {key()}, cmd::persist},
        {"dbsize", 1, V{"readonly", "fast"}, 0, 0, 0, V{"@keyspace", "@read", "@fast"}, "server",
         "Returns the number of keys in the database.", "1.0.0", {}, cmd::dbsize},
        {"flushall", -1, V{"write"}, 0, 0, 0, V{"@keyspace", "@write", "@slow", "@dangerous"}, "server",
         "Removes all keys from all databases.", "1.0.0",
         {{"flush-type", "oneof", nullptr, true, false, {token("ASYNC"), token("SYNC")}}}, cmd::flushall},
        {"flushdb", -1, V{"write"}, 0, 0, 0, V{"@keyspace", "@write", "@slow", "@dangerous"}, "server",
         "Removes all keys from the current database.", "1.0.0",
         {{"flush-type", "oneof", nullptr, true, false, {token("ASYNC"), token("SYNC")}}}, cmd::flushall},
        {"info", -1, V{"loading", "stale"}, 0, 0, 0, V{"@slow", "@dangerous"}, "server",
         "Returns information and statistics about the server (with a transport section).", "1.0.0",
         {{"section", "string", nullptr, true, true, {}}}, cmd::info},
        {"config", -2, V{"admin", "noscript", "loading", "stale"}, 0, 0, 0, V{"@slow"}, "server",
         "CONFIG GET parameter [parameter ...]: returns the effective values of parameters.", "2.0.0",
         {token("GET"), {"parameter", "string", nullptr, false, true, {}}}, cmd::config},
        {"command", -1, V{"loading", "stale"}, 0, 0, 0, V{"@slow", "@connection"}, "server",
         "Returns detailed information about all commands (COUNT, DOCS, INFO, LIST).", "2.8.13",
         {{"subcommand", "string", nullptr, true, false, {}}}, cmd::command},
    };
}

struct Index {
    std::vector<CommandSpec> table = build_table();
    std::unordered_map<std::string_view, const CommandSpec *> by_name;
    Index()
    {
        for (const CommandSpec &c : table) by_name.emplace(c.name, &c);
    }
};

const Index &index()
{
    static const Index instance;
    return instance;
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

} // namespace

bool equals_nocase(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

const std::vector<CommandSpec> &command_table() { return index().table; }

const CommandSpec *find_command(std::string_view name)
{
    char folded[24];
    if (name.size() >= sizeof folded) return nullptr; // longer than any command
    for (size_t i = 0; i < name.size(); ++i) folded[i] = lower(name[i]);
    const auto &map = index().by_name;
    auto it = map.find(std::string_view(folded, name.size()));
    return it == map.end() ? nullptr : it->second;
}

namespace errors {

std::string wrong_arity(std::string_view command)
{
    std::string name;
    for (char c : command) name += lower(c);
    return "ERR wrong number of arguments for '" + name + "' command";
}

} // namespace errors

namespace {

// As Redis words it, so clients that match on it keep working.
std::string unknown_command(const std::vector<std::string_view> &args)
{
    std::string quoted;
    for (size_t i = 1; i < args.size() && quoted.size() < 128; ++i) {
        size_t room = 128 - quoted.size();
        quoted += "'" + std::string(args[i].substr(0, room)) + "' ";
    }
    return "ERR unknown command '" + std::string(args[0].substr(0, 128)) + "', with args beginning with: " + quoted;
}

} // namespace

void execute(CommandContext &ctx)
{
    const CommandSpec *spec = find_command(ctx.args[0]);
    if (!spec) {
        ctx.reply.error(unknown_command(ctx.args));
        return;
    }
    const long argc = static_cast<long>(ctx.args.size());
    if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
        ctx.reply.error(errors::wrong_arity(spec->name));
        return;
    }
    spec->handler(ctx);
}

} // namespace kvd
