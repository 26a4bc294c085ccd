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
ArgDoc strings(const char *name) { return {name, "string", nullptr, false, true, {}}; }
ArgDoc optional_integer(const char *name) { return {name, "integer", nullptr, true, false, {}}; }
ArgDoc pairs(const char *first, const char *second)
{
    return {"data", "block", nullptr, false, true, {string(first), string(second)}};
}

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
        {"client", -2, V{"noscript", "loading", "stale"}, 0, 0, 0, V{"@slow", "@connection"}, "connection",
         "CLIENT SETNAME name, GETNAME, ID, SETINFO: names this connection, as client libraries do.", "2.4.0",
         {{"subcommand", "string", nullptr, false, false, {}}, {"argument", "string", nullptr, true, true, {}}},
         cmd::client},
        {"getset", 3, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@string", "@fast"}, "string",
         "Returns the previous string value of a key after setting it to a new value.", "1.0.0",
         {key(), string("value")}, cmd::getset},
        {"getdel", 2, V{"write", "fast"}, 1, 1, 1, V{"@write", "@string", "@fast"}, "string",
         "Returns the string value of a key after deleting the key.", "6.2.0", {key()}, cmd::getdel},
        {"setnx", 3, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@string", "@fast"}, "string",
         "Set the string value of a key only when the key doesn't exist.", "1.0.0", {key(), string("value")},
         cmd::setnx},
        {"setex", 4, V{"write", "denyoom"}, 1, 1, 1, V{"@write", "@string", "@slow"}, "string",
         "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", "2.0.0",
         {key(), integer("seconds"), string("value")}, cmd::setex},
        {"psetex", 4, V{"write", "denyoom"}, 1, 1, 1, V{"@write", "@string", "@slow"}, "string",
         "Sets both string value and expiration time in milliseconds of a key.", "2.6.0",
         {key(), integer("milliseconds"), string("value")}, cmd::psetex},
        {"unlink", -2, V{"write", "fast"}, 1, -1, 1, V{"@keyspace", "@write", "@fast"}, "generic",
         "Deletes one or more keys (at once: values are freed as DEL frees them).", "4.0.0", {keys()}, cmd::del},
        {"type", 2, V{"readonly", "fast"}, 1, 1, 1, V{"@keyspace", "@read", "@fast"}, "generic",
         "Determines the type of value stored at a key.", "1.0.0", {key()}, cmd::type},
        {"keys", 2, V{"readonly"}, 0, 0, 0, V{"@keyspace", "@read", "@slow", "@dangerous"}, "generic",
         "Returns all key names that match a pattern.", "1.0.0", {string("pattern")}, cmd::keys},
        {"scan", -2, V{"readonly"}, 0, 0, 0, V{"@keyspace", "@read", "@slow"}, "generic",
         "Iterates over the key names in the database.", "2.8.0",
         {integer("cursor"), {"pattern", "pattern", "MATCH", true, false, {}},
          {"count", "integer", "COUNT", true, false, {}}, {"type", "string", "TYPE", true, false, {}}},
         cmd::scan},
        {"lpush", -3, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@list", "@fast"}, "list",
         "Prepends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0",
         {key(), strings("element")}, cmd::lpush},
        {"rpush", -3, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@list", "@fast"}, "list",
         "Appends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0",
         {key(), strings("element")}, cmd::rpush},
        {"lpop", -2, V{"write", "fast"}, 1, 1, 1, V{"@write", "@list", "@fast"}, "list",
         "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.",
         "1.0.0", {key(), optional_integer("count")}, cmd::lpop},
        {"rpop", -2, V{"write", "fast"}, 1, 1, 1, V{"@write", "@list", "@fast"}, "list",
         "Returns and removes the last elements of a list. Deletes the list if the last element was popped.",
         "1.0.0", {key(), optional_integer("count")}, cmd::rpop},
        {"lrange", 4, V{"readonly"}, 1, 1, 1, V{"@read", "@list", "@slow"}, "list",
         "Returns a range of elements from a list.", "1.0.0", {key(), integer("start"), integer("stop")},
         cmd::lrange},
        {"llen", 2, V{"readonly", "fast"}, 1, 1, 1, V{"@read", "@list", "@fast"}, "list",
         "Returns the length of a list.", "1.0.0", {key()}, cmd::llen},
        {"sadd", -3, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@set", "@fast"}, "set",
         "Adds one or more members to a set. Creates the key if it doesn't exist.", "1.0.0",
         {key(), strings("member")}, cmd::sadd},
        {"srem", -3, V{"write", "fast"}, 1, 1, 1, V{"@write", "@set", "@fast"}, "set",
         "Removes one or more members from a set. Deletes the set if the last member was removed.", "1.0.0",
         {key(), strings("member")}, cmd::srem},
        {"spop", -2, V{"write", "fast"}, 1, 1, 1, V{"@write", "@set", "@fast"}, "set",
         "Returns one or more random members from a set after removing them. Deletes the set if the last member "
         "was popped.", "1.0.0", {key(), optional_integer("count")}, cmd::spop},
        {"smembers", 2, V{"readonly"}, 1, 1, 1, V{"@read", "@set", "@slow"}, "set",
         "Returns all members of a set.", "1.0.0", {key()}, cmd::smembers},
        {"sismember", 3, V{"readonly", "fast"}, 1, 1, 1, V{"@read", "@set", "@fast"}, "set",
         "Determines whether a member belongs to a set.", "1.0.0", {key(), string("member")}, cmd::sismember},
        {"scard", 2, V{"readonly", "fast"}, 1, 1, 1, V{"@read", "@set", "@fast"}, "set",
         "Returns the number of members in a set.", "1.0.0", {key()}, cmd::scard},
        {"hset", -4, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@hash", "@fast"}, "hash",
         "Creates or modifies the value of a field in a hash.", "2.0.0", {key(), pairs("field", "value")},
         cmd::hset},
        {"hmset", -4, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@hash", "@fast"}, "hash",
         "Sets the values of multiple fields.", "2.0.0", {key(), pairs("field", "value")}, cmd::hmset},
        {"hget", 3, V{"readonly", "fast"}, 1, 1, 1, V{"@read", "@hash", "@fast"}, "hash",
         "Returns the value of a field in a hash.", "2.0.0", {key(), string("field")}, cmd::hget},
        {"hgetall", 2, V{"readonly"}, 1, 1, 1, V{"@read", "@hash", "@slow"}, "hash",
         "Returns all fields and values in a hash.", "2.0.0", {key()}, cmd::hgetall},
        {"hdel", -3, V{"write", "fast"}, 1, 1, 1, V{"@write", "@hash", "@fast"}, "hash",
         "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.",
         "2.0.0", {key(), strings("field")}, cmd::hdel},
        {"hlen", 2, V{"readonly", "fast"}, 1, 1, 1, V{"@read", "@hash", "@fast"}, "hash",
         "Returns the number of fields in a hash.", "2.0.0", {key()}, cmd::hlen},
        {"hexists", 3, V{"readonly", "fast"}, 1, 1, 1, V{"@read", "@hash", "@fast"}, "hash",
         "Determines whether a field exists in a hash.", "2.0.0", {key(), string("field")}, cmd::hexists},
        {"zadd", -4, V{"write", "denyoom", "fast"}, 1, 1, 1, V{"@write", "@sortedset", "@fast"}, "sorted-set",
         "Adds one or more members to a sorted set, or updates their scores (no NX/XX/GT/LT/CH/INCR here).",
         "1.2.0", {key(), {"data", "block", nullptr, false, true, {{"score", "double", nullptr, false, false, {}},
                                                                     string("member")}}},
         cmd::zadd},
        {"zpopmin", -2, V{"write", "fast"}, 1, 1, 1, V{"@write", "@sortedset", "@fast"}, "sorted-set",
         "Returns the lowest-scoring members from a sorted set after removing them.", "5.0.0",
         {key(), optional_integer("count")}, cmd::zpopmin},
        {"zrange", -4, V{"readonly"}, 1, 1, 1, V{"@read", "@sortedset", "@slow"}, "sorted-set",
         "Returns members in a sorted set within a range of indexes (start stop [WITHSCORES] here).", "1.2.0",
         {key(), integer("start"), integer("stop"),
          {"withscores", "pure-token", "WITHSCORES", true, false, {}}}, cmd::zrange},
        {"zcard", 2, V{"readonly", "fast"}, 1, 1, 1, V{"@read", "@sortedset", "@fast"}, "sorted-set",
         "Returns the number of members in a sorted set.", "1.2.0", {key()}, cmd::zcard},
        {"zscore", 3, V{"readonly", "fast"}, 1, 1, 1, V{"@read", "@sortedset", "@fast"}, "sorted-set",
         "Returns the score of a member in a sorted set.", "1.2.0", {key(), string("member")}, cmd::zscore},
        {"zrem", -3, V{"write", "fast"}, 1, 1, 1, V{"@write", "@sortedset", "@fast"}, "sorted-set",
         "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.",
         "1.2.0", {key(), strings("member")}, cmd::zrem},
        {"multi", 1, V{"noscript", "loading", "stale", "fast", "allow_busy"}, 0, 0, 0,
         V{"@fast", "@transaction"}, "transactions", "Starts a transaction.", "1.2.0", {}, cmd::multi},
        {"exec", 1, V{"noscript", "loading", "stale", "skip_slowlog"}, 0, 0, 0, V{"@slow", "@transaction"},
         "transactions", "Executes all commands in a transaction.", "1.2.0", {}, cmd::exec},
        {"discard", 1, V{"noscript", "loading", "stale", "fast", "allow_busy"}, 0, 0, 0,
         V{"@fast", "@transaction"}, "transactions", "Discards a transaction.", "2.0.0", {}, cmd::discard},
        {"watch", -2, V{"noscript", "loading", "stale", "fast", "allow_busy"}, 1, -1, 1,
         V{"@fast", "@transaction"}, "transactions",
         "Monitors changes to keys to determine the execution of a transaction.", "2.2.0", {keys()}, cmd::watch},
        {"unwatch", 1, V{"noscript", "loading", "stale", "fast", "allow_busy"}, 0, 0, 0,
         V{"@fast", "@transaction"}, "transactions", "Forgets about watched keys of a transaction.", "2.2.0", {},
         cmd::unwatch},
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

const CommandSpec *checked_command(CommandContext &ctx)
{
    const CommandSpec *spec = find_command(ctx.args[0]);
    if (!spec) {
        ctx.reply.error(unknown_command(ctx.args));
        return nullptr;
    }
    const long argc = static_cast<long>(ctx.args.size());
    if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
        ctx.reply.error(errors::wrong_arity(spec->name));
        return nullptr;
    }
    return spec;
}

void execute(CommandContext &ctx)
{
    if (const CommandSpec *spec = checked_command(ctx)) spec->handler(ctx);
}

} // namespace kvd
