// SPDX-License-Identifier: MIT
// The keyspace: keys to strings, lists, sets, hashes or sorted sets, with
// optional expiry, shared by every loop thread.
//
// Why striped locks and not one keyspace per loop: the runtime hands
// connections to loops round robin, so any connection asks for any key.
// Owning keys by loop would turn most requests (with threads = 2, half of
// them) into a hop to another thread and back - an eventfd write, a wakeup
// and reply reordering for pipelined requests - which costs far more than an
// uncontended mutex (tens of nanoseconds).  With 64 stripes two threads
// rarely meet on one lock, and with threads = 1 the locks are never
// contended.  Multi-key commands lock their stripes in ascending order, so
// they stay atomic and cannot deadlock.
#pragma once

#include "key_table.hpp"
#include "transaction_gate.hpp"

#include <atomic>
#include <bitset>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace kvd {

/// Milliseconds on a clock that never jumps back; tests substitute their own.
class Clock {
public:
    virtual ~Clock() = default;
    virtual int64_t now_ms() const = 0;
};

class MonotonicClock : public Clock {
public:
    int64_t now_ms() const override;
};

struct SetOptions {
    enum class Condition { Always, IfAbsent, IfPresent };
    Condition condition = Condition::Always;
    int64_t ttl_ms = 0;    ///< > 0: expire after this; 0: no expiry
    bool keep_ttl = false; ///< keep the key's current expiry (KEEPTTL)
};

enum class IncrStatus { Ok, NotInteger, Overflow, WrongType };

/// A lookup of a key that must hold one kind of value.
enum class Found { Yes, No, WrongType };

/// A key as SCAN returns it: its name and TYPE.
struct ScannedKey {
    std::string name;
    const char *type;
};

class Keyspace {
public:
    static constexpr unsigned kShardBits = 6;
    static constexpr size_t kShards = size_t(1) << kShardBits;

    /// `random_seed` seeds the engines of commands that pick at random
    /// (SPOP); tests pass a fixed one so that runs can be compared.
    explicit Keyspace(const Clock &clock, uint64_t random_seed = std::random_device{}());
    Keyspace(const Keyspace &) = delete;
    Keyspace &operator=(const Keyspace &) = delete;

    /// Call `use(value)` with the live string value of `key`, under its lock.
    template <class Use> Found read(std::string_view key, Use &&use);
    /// Store `value` unless the condition says no (then returns false).
    /// Whatever the key held before, it holds a string now.
    bool set(std::string_view key, std::string_view value, const SetOptions &options);
    /// GETSET: store `value` (no expiry) and hand back the old string in
    /// `old`; a key of another type is left alone (WrongType).
    Found replace(std::string_view key, std::string_view value, std::string &old);
    /// GETDEL: delete a string key, handing back its value.
    Found take(std::string_view key, std::string &value);
    bool erase(std::string_view key);
    bool exists(std::string_view key);
    /// "none", "string", "list", "set", "hash" or "zset".
    const char *type_of(std::string_view key);
    /// Call `use(const Item &)` with the live entry of `key`, under its
    /// lock, whatever it holds (MEMORY USAGE, OBJECT); false when missing.
    template <class Use> bool inspect(std::string_view key, Use &&use);
    IncrStatus incr_by(std::string_view key, long long delta, long long &result);

    /// Call `use(const C &)` with the collection at `key`, under its lock.
    template <class C, class Use> Found read_as(std::string_view key, Use &&use);
    /// Call `change(C &)` on the collection at `key`, creating an empty one
    /// first when `create`; a collection left empty is deleted, as Redis does.
    /// A `change(C &, std::minstd_rand &)` also gets the stripe's random
    /// engine, under the same lock.
    template <class C, class Change> Found change_as(std::string_view key, bool create, Change &&change);

    /// Call `visit(key)` for every live key until it returns false; one
    /// stripe locked at a time.
    template <class Visit> void for_each_key(Visit &&visit);
    /// SCAN: keys in the order of their hash, from `cursor` on, about
    /// `count` of them; returns the next cursor (0: done).  A key there for
    /// the whole scan is returned exactly once, whatever is added or deleted
    /// in between: the cursor is a hash value, not a slot.
    uint64_t scan(uint64_t cursor, size_t count, std::vector<ScannedKey> &out);

    /// WATCH: every change to a stripe bumps its version, so EXEC can tell
    /// whether a watched key may have changed (a change to another key of
    /// the same stripe counts too: the client retries, as after a real one).
    struct Watch {
        size_t stripe;
        uint64_t version;
    };
    Watch watch(std::string_view key);
    bool changed_since(const std::vector<Watch> &watches);
    /// MULTI/EXEC run whole while every other command waits (transaction_gate.hpp).
    TransactionGate &gate() { return gate_; }
    /// Expire `key` after `ttl_ms` (<= 0: delete it now).  False when missing.
    bool expire(std::string_view key, int64_t ttl_ms);
    /// Milliseconds left; -1 without expiry, -2 when the key does not exist.
    int64_t ttl_ms(std::string_view key);
    bool persist(std::string_view key);

    /// Atomic multi-key forms: every stripe involved is locked at once.
    void set_many(const std::vector<std::pair<std::string_view, std::string_view>> &pairs);
    template <class Use> void read_many(const std::vector<std::string_view> &keys, Use &&use);
    size_t erase_many(const std::vector<std::string_view> &keys);
    size_t count_existing(const std::vector<std::string_view> &keys);

    size_t size() const;          ///< keys, including expired ones not yet swept
    size_t volatile_size() const; ///< keys with an expiry
    void clear();
    /// Delete expired keys, examining at most `budget` expiry records.
    /// Returns how many keys it deleted.
    size_t sweep(size_t budget);
    /// Keys deleted because they expired (on access or by a sweep).
    uint64_t expired_total() const { return expired_.load(std::memory_order_relaxed); }

private:
    using Expiry = std::pair<int64_t, std::string>;
    struct alignas(64) Shard {
        mutable std::mutex mutex;
        KeyTable table;
        // Min-heap of (expire_at, key).  Records go stale when a key is
        // deleted or gets another expiry; a sweep checks each against the table.
        std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> expiries;
        size_t volatile_keys = 0;
        uint64_t version = 0; ///< bumped by every change (WATCH)
        std::minstd_rand random;
    };
    /// A key with its hash, computed once per command.
    struct Key {
        explicit Key(std::string_view k) : text(k), hash(KeyTable::hash(k)) {}
        std::string_view text;
        uint64_t hash;
    };

    class MultiLock {
    public:
        MultiLock(Keyspace &ks, const std::vector<std::string_view> &keys);
        ~MultiLock();

    private:
        Keyspace &ks_;
        std::bitset<kShards> held_;
    };

    Shard &shard_for(const Key &key) { return shards_[key.hash >> (64 - kShardBits)]; }
    /// The entry for `key` if it is live; an expired one is deleted.  Lock held.
    Item *find_live(Shard &s, const Key &key);
    /// Set `key` (its entry `item`, or nullptr when absent) to `value`.  Lock held.
    void store(Shard &s, Item *item, const Key &key, std::string_view value, const SetOptions &options);
    void erase_entry(Shard &s, Item *item, const Key &key);
    /// A new key holding an empty collection of type C.  Lock held.
    template <class C> Item *insert_collection(Shard &s, const Key &key);
    /// Delete `item` if its collection is empty.  Lock held.
    void drop_if_empty(Shard &s, Item *item, const Key &key);
    template <class C> static C *collection_as(Item &item)
    {
        return item.collection ? std::get_if<C>(item.collection.get()) : nullptr;
    }
    void set_expiry(Shard &s, Item *item, int64_t expire_at);
    void compact_expiries(Shard &s);

    const Clock &clock_;
    Shard shards_[kShards];
    TransactionGate gate_;
    std::atomic<uint64_t> expired_{0};
    std::atomic<size_t> sweep_cursor_{0};
};

template <class Use> Found Keyspace::read(std::string_view name, Use &&use)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item) return Found::No;
    if (item->collection) return Found::WrongType;
    use(std::string_view(item->value));
    return Found::Yes;
}

template <class Use> bool Keyspace::inspect(std::string_view name, Use &&use)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item) return false;
    use(static_cast<const Item &>(*item));
    return true;
}

template <class C, class Use> Found Keyspace::read_as(std::string_view name, Use &&use)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item) return Found::No;
    const C *c = collection_as<C>(*item);
    if (!c) return Found::WrongType;
    use(*c);
    return Found::Yes;
}

template <class C> Item *Keyspace::insert_collection(Shard &s, const Key &key)
{
    auto collection = std::make_unique<Collection>(std::in_place_type<C>);
    Item *item = s.table.insert(key.text, key.hash, {});
    item->collection = std::move(collection);
    return item;
}

template <class C, class Change> Found Keyspace::change_as(std::string_view name, bool create, Change &&change)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item) {
        if (!create) return Found::No;
        item = insert_collection<C>(s, key);
    }
    C *c = collection_as<C>(*item);
    if (!c) return Found::WrongType;
    ++s.version;
    try {
        if constexpr (std::is_invocable_v<Change, C &, std::minstd_rand &>) change(*c, s.random);
        else change(*c);
    } catch (...) {
        drop_if_empty(s, item, key); // a key created for a change that failed
        throw;
    }
    drop_if_empty(s, item, key);
    return Found::Yes;
}

template <class Visit> void Keyspace::for_each_key(Visit &&visit)
{
    const int64_t now = clock_.now_ms();
    for (Shard &s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        bool go_on = true;
        s.table.for_each([&](const Item &item) {
            if (go_on && (item.expire_at == 0 || item.expire_at > now)) go_on = visit(item.key());
        });
        if (!go_on) return;
    }
}

template <class Use> void Keyspace::read_many(const std::vector<std::string_view> &keys, Use &&use)
{
    MultiLock lock(*this, keys);
    for (std::string_view name : keys) {
        Key key(name);
        Item *item = find_live(shard_for(key), key);
        if (!item || item->collection) { // MGET reads another type as nil, as Redis does
            use(nullptr);
        } else {
            std::string_view value(item->value);
            use(&value);
        }
    }
}

} // namespace kvd
