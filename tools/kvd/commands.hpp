// SPDX-License-Identifier: MIT
// The command table and what each command does.
#pragma once

#include "keyspace.hpp"
#include "resp_reply.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvd {

class Session;

/// What commands may ask of the server around them (INFO, CONFIG GET).
/// The daemon implements it over the runtime; tests with fixed answers.
class Host {
public:
    virtual ~Host() = default;
    /// The INFO text for `sections` ("" or "default", "all", or names),
    /// as seen by `caller`.
    virtual std::string info(const std::vector<std::string_view> &sections, const Session &caller) = 0;
    /// Parameter/value pairs for CONFIG GET.
    virtual std::vector<std::pair<std::string, std::string>> config_parameters() = 0;
};

struct CommandContext {
    const std::vector<std::string_view> &args; ///< args[0] is the command name
    Reply &reply;
    Keyspace &keyspace;
    Session &session;
    Host &host;
};

using CommandHandler = void (*)(CommandContext &);

/// One argument in COMMAND DOCS (what redis-cli shows as hints).
struct ArgDoc {
    const char *name;
    const char *type;  ///< key, string, integer, pure-token, oneof, block
    const char *token; ///< the literal word before it, or nullptr
    bool optional;
    bool multiple;
    std::vector<ArgDoc> children; ///< for oneof and block
};

struct CommandSpec {
    const char *name; ///< lower case
    int arity;        ///< Redis convention: n = exactly n words, -n = at least n
    std::vector<const char *> flags;
    int first_key, last_key, key_step;
    std::vector<const char *> categories; ///< ACL categories, "@string"
    const char *group;
    const char *summary;
    const char *since;
    std::vector<ArgDoc> arguments;
    CommandHandler handler;
};

/// Every command, in a stable order.
const std::vector<CommandSpec> &command_table();
/// The command called `name`, in any letter case, or nullptr.
const CommandSpec *find_command(std::string_view name);

/// The command in ctx.args[0] when it exists and has a valid number of
/// arguments; otherwise nullptr, with the error in ctx.reply.
const CommandSpec *checked_command(CommandContext &ctx);
/// Run the request in ctx.args: look it up, check its arity, call it, and
/// always leave exactly one reply.
void execute(CommandContext &ctx);

// Implemented in the command_*.cpp files, listed in command_table.cpp.
namespace cmd {
void ping(CommandContext &);
void echo(CommandContext &);
void quit(CommandContext &);
void select(CommandContext &);
void set(CommandContext &);
void get(CommandContext &);
void mset(CommandContext &);
void mget(CommandContext &);
void incr(CommandContext &);
void decr(CommandContext &);
void incrby(CommandContext &);
void decrby(CommandContext &);
void del(CommandContext &);
void exists(CommandContext &);
void expire(CommandContext &);
void pexpire(CommandContext &);
void ttl(CommandContext &);
void pttl(CommandContext &);
void persist(CommandContext &);
void dbsize(CommandContext &);
void flushall(CommandContext &);
void info(CommandContext &);
void config(CommandContext &);
void command(CommandContext &);
void client(CommandContext &);
// strings
void getset(CommandContext &);
void getdel(CommandContext &);
void setnx(CommandContext &);
void setex(CommandContext &);
void psetex(CommandContext &);
void strlen(CommandContext &);
// keys
void keys(CommandContext &);
void scan(CommandContext &);
void type(CommandContext &);
// what a key costs and how it is kept
void memory(CommandContext &);
void object(CommandContext &);
// lists
void lpush(CommandContext &);
void rpush(CommandContext &);
void lpop(CommandContext &);
void rpop(CommandContext &);
void lrange(CommandContext &);
void llen(CommandContext &);
// sets
void sadd(CommandContext &);
void srem(CommandContext &);
void spop(CommandContext &);
void smembers(CommandContext &);
void sismember(CommandContext &);
void scard(CommandContext &);
// hashes
void hset(CommandContext &);
void hmset(CommandContext &);
void hget(CommandContext &);
void hgetall(CommandContext &);
void hdel(CommandContext &);
void hlen(CommandContext &);
void hexists(CommandContext &);
// sorted sets
void zadd(CommandContext &);
void zpopmin(CommandContext &);
void zrange(CommandContext &);
void zcard(CommandContext &);
void zscore(CommandContext &);
void zrem(CommandContext &);
// transactions
void multi(CommandContext &);
void exec(CommandContext &);
void discard(CommandContext &);
void watch(CommandContext &);
void unwatch(CommandContext &);
} // namespace cmd

/// Shared replies.
namespace errors {
constexpr const char *kSyntax = "ERR syntax error";
constexpr const char *kNotInteger = "ERR value is not an integer or out of range";
constexpr const char *kWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value";
constexpr const char *kNotPositive = "ERR value is out of range, must be positive";
std::string wrong_arity(std::string_view command);
} // namespace errors

/// Reply WRONGTYPE when `found` says so; true when the command goes on.
inline bool not_wrong_type(CommandContext &ctx, Found found)
{
    if (found != Found::WrongType) return true;
    ctx.reply.error(errors::kWrongType);
    return false;
}

/// The words from args[first] on.
inline std::vector<std::string_view> args_from(const CommandContext &ctx, size_t first)
{
    return std::vector<std::string_view>(ctx.args.begin() + static_cast<long>(first), ctx.args.end());
}

/// ASCII case-insensitive equality (command names, options).
bool equals_nocase(std::string_view a, std::string_view b);

} // namespace kvd
