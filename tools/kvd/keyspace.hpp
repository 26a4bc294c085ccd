// SPDX-License-Identifier: MIT
// The keyspace: string keys to string values with optional expiry, shared by
// every loop thread.
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

#include <atomic>
#include <bitset>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
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
    int64_t ttl_ms = 0;     ///< > 0: expire after this; 0: no expiry
    bool keep_ttl = false;  ///< keep the key's current expiry (KEEPTTL)
};

enum class IncrStatus { Ok, NotInteger, Overflow };

class Keyspace {
public:
    static constexpr unsigned kShardBits = 6;
    static constexpr size_t kShards = size_t(1) << kShardBits;

    explicit Keyspace(const Clock &clock);
    Keyspace(const Keyspace &) = delete;
    Keyspace &operator=(const Keyspace &) = delete;

    /// Call `use(value)` with the live value of `key`, under its lock;
    /// returns false when there is none.
    template <class Use> bool read(std::string_view key, Use &&use);
    /// Store `value` unless the condition says no (then returns false).
    bool set(std::string_view key, std::string_view value, const SetOptions &options);
    bool erase(std::string_view key);
    bool exists(std::string_view key);
    IncrStatus incr_by(std::string_view key, long long delta, long long &result);
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
    void set_expiry(Shard &s, Item *item, int64_t expire_at);
    void compact_expiries(Shard &s);

    const Clock &clock_;
    Shard shards_[kShards];
    std::atomic<uint64_t> expired_{0};
    std::atomic<size_t> sweep_cursor_{0};
};

template <class Use> bool Keyspace::read(std::string_view name, Use &&use)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item) return false;
    use(std::string_view(item->value));
    return true;
}

template <class Use> void Keyspace::read_many(const std::vector<std::string_view> &keys, Use &&use)
{
    MultiLock lock(*this, keys);
    for (std::string_view name : keys) {
        Key key(name);
        Item *item = find_live(shard_for(key), key);
        if (!item) {
            use(nullptr);
        } else {
            std::string_view value(item->value);
            use(&value);
        }
    }
}

} // namespace kvd
