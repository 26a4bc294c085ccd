// SPDX-License-Identifier: MIT
#include "keyspace.hpp"

#include "integer_text.hpp"

#include <algorithm>
#include <chrono>
#include <climits>

namespace kvd {

// steady_clock is CLOCK_MONOTONIC, the loops' clock, without linking the loops.
int64_t MonotonicClock::now_ms() const
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

Keyspace::Keyspace(const Clock &clock, uint64_t random_seed) : clock_(clock)
{
    for (size_t i = 0; i < kShards; ++i) {
        std::seed_seq seq{uint32_t(random_seed), uint32_t(random_seed >> 32), uint32_t(i)};
        shards_[i].random.seed(seq);
    }
}

Item *Keyspace::find_live(Shard &s, const Key &key)
{
    Item *item = s.table.find(key.text, key.hash);
    if (!item) return nullptr;
    if (item->expire_at != 0 && item->expire_at <= clock_.now_ms()) {
        erase_entry(s, item, key);
        expired_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    return item;
}

void Keyspace::erase_entry(Shard &s, Item *item, const Key &key)
{
    if (item->expire_at != 0) --s.volatile_keys;
    s.table.erase(key.text, key.hash);
    ++s.version;
}

void Keyspace::drop_if_empty(Shard &s, Item *item, const Key &key)
{
    bool empty = std::visit([](const auto &c) { return c.empty(); }, *item->collection);
    if (empty) erase_entry(s, item, key);
}

void Keyspace::set_expiry(Shard &s, Item *item, int64_t expire_at)
{
    int64_t old = item->expire_at;
    if (old == 0 && expire_at != 0) ++s.volatile_keys;
    if (old != 0 && expire_at == 0) --s.volatile_keys;
    item->expire_at = expire_at;
    ++s.version;
    if (expire_at == 0) return;
    s.expiries.emplace(expire_at, std::string(item->key()));
    compact_expiries(s);
}

// A key given a new expiry again and again leaves stale records behind;
// rebuild the heap from the table when they outnumber the live ones.
void Keyspace::compact_expiries(Shard &s)
{
    if (s.expiries.size() <= 2 * s.volatile_keys + 1024) return;
    std::vector<Expiry> live;
    live.reserve(s.volatile_keys);
    s.table.for_each([&live](const Item &item) {
        if (item.expire_at != 0) live.emplace_back(item.expire_at, std::string(item.key()));
    });
    s.expiries = decltype(s.expiries)(std::greater<Expiry>(), std::move(live));
}

void Keyspace::store(Shard &s, Item *item, const Key &key, std::string_view value, const SetOptions &options)
{
    if (!item) {
        item = s.table.insert(key.text, key.hash, value);
    } else {
        item->value.assign(value.data(), value.size());
        item->collection.reset(); // SET replaces a value of any type
    }
    ++s.version;
    if (!options.keep_ttl) set_expiry(s, item, options.ttl_ms > 0 ? clock_.now_ms() + options.ttl_ms : 0);
}

bool Keyspace::set(std::string_view name, std::string_view value, const SetOptions &options)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (options.condition == SetOptions::Condition::IfAbsent && item) return false;
    if (options.condition == SetOptions::Condition::IfPresent && !item) return false;
    store(s, item, key, value, options);
    return true;
}

Found Keyspace::replace(std::string_view name, std::string_view value, std::string &old)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (item && item->collection) return Found::WrongType;
    if (!item) {
        store(s, nullptr, key, value, SetOptions());
        return Found::No;
    }
    std::string fresh(value); // allocated before anything changes
    old.swap(item->value);
    item->value.swap(fresh);
    set_expiry(s, item, 0); // GETSET drops the expiry, as SET does
    return Found::Yes;
}

Found Keyspace::take(std::string_view name, std::string &value)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item) return Found::No;
    if (item->collection) return Found::WrongType;
    value.swap(item->value);
    erase_entry(s, item, key);
    return Found::Yes;
}

const char *Keyspace::type_of(std::string_view name)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item) return "none";
    return item->collection ? type_name(*item->collection) : "string";
}

uint64_t Keyspace::scan(uint64_t cursor, size_t count, std::vector<ScannedKey> &out)
{
    const int64_t now = clock_.now_ms();
    const size_t wanted = std::max<size_t>(count, 1);
    for (size_t stripe = cursor >> (64 - kShardBits); stripe < kShards; ++stripe) {
        Shard &s = shards_[stripe];
        std::lock_guard<std::mutex> lock(s.mutex);
        // The live keys of this stripe from the cursor on, fewest hashes first.
        std::vector<std::pair<uint64_t, const Item *>> next;
        s.table.for_each_with_hash([&](uint64_t hash, const Item &item) {
            if (hash >= cursor && (item.expire_at == 0 || item.expire_at > now)) next.emplace_back(hash, &item);
        });
        const size_t room = wanted > out.size() ? wanted - out.size() : 0;
        auto by_hash = [](const auto &a, const auto &b) { return a.first < b.first; };
        size_t take = next.size();
        if (next.size() > room) {
            std::nth_element(next.begin(), next.begin() + static_cast<long>(room), next.end(), by_hash);
            std::sort(next.begin(), next.begin() + static_cast<long>(room) + 1, by_hash);
            // Never split keys of one hash between two calls: the cursor is a hash.
            take = room;
            const uint64_t boundary = next[room].first;
            while (take > 0 && next[take - 1].first == boundary) --take;
            if (take == 0) { // all of the first `room` share one hash: take every key with it
                std::sort(next.begin(), next.end(), by_hash);
                while (take < next.size() && next[take].first == boundary) ++take;
            }
        }
        for (size_t i = 0; i < take; ++i) {
            const Item &item = *next[i].second;
            out.push_back({std::string(item.key()), item.collection ? type_name(*item.collection) : "string"});
        }
        if (take < next.size()) return next[take].first; // the first hash not returned
        cursor = static_cast<uint64_t>(stripe + 1) << (64 - kShardBits);
        if (stripe + 1 == kShards || out.size() >= wanted) return stripe + 1 == kShards ? 0 : cursor;
    }
    return 0;
}

Keyspace::Watch Keyspace::watch(std::string_view name)
{
    Shard &s = shard_for(Key(name));
    std::lock_guard<std::mutex> lock(s.mutex);
    return {static_cast<size_t>(&s - shards_), s.version};
}

bool Keyspace::changed_since(const std::vector<Watch> &watches)
{
    for (const Watch &w : watches) {
        Shard &s = shards_[w.stripe];
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.version != w.version) return true;
    }
    return false;
}

bool Keyspace::erase(std::string_view name)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item) return false;
    erase_entry(s, item, key);
    return true;
}

bool Keyspace::exists(std::string_view name)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    return find_live(s, key) != nullptr;
}

IncrStatus Keyspace::incr_by(std::string_view name, long long delta, long long &result)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    long long current = 0;
    if (item && item->collection) return IncrStatus::WrongType;
    if (item && !parse_integer(item->value, current)) return IncrStatus::NotInteger;
    if ((delta > 0 && current > LLONG_MAX - delta) || (delta < 0 && current < LLONG_MIN - delta))
        return IncrStatus::Overflow;
    result = current + delta;
    // INCR keeps the key's expiry, as Redis does.
    if (!item) s.table.insert(key.text, key.hash, integer_text(result));
    else item->value = integer_text(result);
    ++s.version;
    return IncrStatus::Ok;
}

bool Keyspace::expire(std::string_view name, int64_t ttl_ms)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item) return false;
    if (ttl_ms <= 0) erase_entry(s, item, key);
    else set_expiry(s, item, clock_.now_ms() + ttl_ms);
    return true;
}

int64_t Keyspace::ttl_ms(std::string_view name)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item) return -2;
    if (item->expire_at == 0) return -1;
    int64_t left = item->expire_at - clock_.now_ms();
    return left > 0 ? left : 0;
}

bool Keyspace::persist(std::string_view name)
{
    Key key(name);
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    Item *item = find_live(s, key);
    if (!item || item->expire_at == 0) return false;
    set_expiry(s, item, 0);
    return true;
}

Keyspace::MultiLock::MultiLock(Keyspace &ks, const std::vector<std::string_view> &keys) : ks_(ks)
{
    for (std::string_view name : keys) held_.set(static_cast<size_t>(&ks.shard_for(Key(name)) - ks.shards_));
    for (size_t i = 0; i < kShards; ++i)
        if (held_.test(i)) ks.shards_[i].mutex.lock();
}

Keyspace::MultiLock::~MultiLock()
{
    for (size_t i = kShards; i-- > 0;)
        if (held_.test(i)) ks_.shards_[i].mutex.unlock();
}

void Keyspace::set_many(const std::vector<std::pair<std::string_view, std::string_view>> &pairs)
{
    std::vector<std::string_view> keys;
    keys.reserve(pairs.size());
    for (const auto &p : pairs) keys.push_back(p.first);
    MultiLock lock(*this, keys);
    SetOptions plain;
    for (const auto &p : pairs) {
        Key key(p.first);
        Shard &s = shard_for(key);
        store(s, find_live(s, key), key, p.second, plain);
    }
}

size_t Keyspace::erase_many(const std::vector<std::string_view> &keys)
{
    MultiLock lock(*this, keys);
    size_t n = 0;
    for (std::string_view name : keys) {
        Key key(name);
        Shard &s = shard_for(key);
        Item *item = find_live(s, key);
        if (!item) continue;
        erase_entry(s, item, key);
        ++n;
    }
    return n;
}

size_t Keyspace::count_existing(const std::vector<std::string_view> &keys)
{
    MultiLock lock(*this, keys);
    size_t n = 0;
    for (std::string_view name : keys) {
        Key key(name);
        if (find_live(shard_for(key), key)) ++n;
    }
    return n;
}

size_t Keyspace::size() const
{
    size_t n = 0;
    for (const Shard &s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        n += s.table.size();
    }
    return n;
}

size_t Keyspace::volatile_size() const
{
    size_t n = 0;
    for (const Shard &s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        n += s.volatile_keys;
    }
    return n;
}

void Keyspace::clear()
{
    for (Shard &s : shards_) s.mutex.lock();
    for (Shard &s : shards_) {
        s.table.clear();
        s.expiries = decltype(s.expiries)();
        s.volatile_keys = 0;
        ++s.version;
    }
    for (size_t i = kShards; i-- > 0;) shards_[i].mutex.unlock();
}

size_t Keyspace::sweep(size_t budget)
{
    const int64_t now = clock_.now_ms();
    size_t deleted = 0;
    for (size_t n = 0; n < kShards && budget > 0; ++n) {
        Shard &s = shards_[sweep_cursor_.fetch_add(1, std::memory_order_relaxed) % kShards];
        std::lock_guard<std::mutex> lock(s.mutex);
        while (budget > 0 && !s.expiries.empty() && s.expiries.top().first <= now) {
            --budget;
            Key key(s.expiries.top().second);
            Item *item = s.table.find(key.text, key.hash);
            if (item && item->expire_at != 0 && item->expire_at <= now) {
                erase_entry(s, item, key);
                ++deleted;
            }
            s.expiries.pop(); // after the erase: `key` points into this record
        }
    }
    expired_.fetch_add(deleted, std::memory_order_relaxed);
    return deleted;
}

} // namespace kvd
