// SPDX-License-Identifier: MIT
#include "keyspace.hpp"

#include "integer_text.hpp"

#include <twinwire/loop.hpp>

#include <climits>

namespace kvd {

int64_t MonotonicClock::now_ms() const { return static_cast<int64_t>(twinwire::monotonic_ns() / 1000000u); }

Keyspace::Keyspace(const Clock &clock) : clock_(clock) {}

Keyspace::Shard &Keyspace::shard_for(std::string_view key)
{
    size_t h = std::hash<std::string_view>{}(key);
    return shards_[(h ^ (h >> 32)) & (kShards - 1)];
}

Keyspace::Map::iterator Keyspace::find_live(Shard &s, std::string_view key)
{
    // unordered_map has no lookup by string_view before C++20: reuse one
    // string per thread so a lookup never allocates.
    thread_local std::string probe;
    probe.assign(key.data(), key.size());
    auto it = s.map.find(probe);
    if (it == s.map.end()) return it;
    int64_t at = it->second.expire_at;
    if (at != 0 && at <= clock_.now_ms()) {
        erase_entry(s, it);
        expired_.fetch_add(1, std::memory_order_relaxed);
        return s.map.end();
    }
    return it;
}

void Keyspace::erase_entry(Shard &s, Map::iterator it)
{
    if (it->second.expire_at != 0) --s.volatile_keys;
    s.map.erase(it);
}

void Keyspace::set_expiry(Shard &s, Map::iterator it, int64_t expire_at)
{
    int64_t old = it->second.expire_at;
    if (old == 0 && expire_at != 0) ++s.volatile_keys;
    if (old != 0 && expire_at == 0) --s.volatile_keys;
    it->second.expire_at = expire_at;
    if (expire_at == 0) return;
    s.expiries.emplace(expire_at, it->first);
    compact_expiries(s);
}

// A key given a new expiry again and again leaves stale records behind;
// rebuild the heap from the map when they outnumber the live ones.
void Keyspace::compact_expiries(Shard &s)
{
    if (s.expiries.size() <= 2 * s.volatile_keys + 1024) return;
    std::vector<Expiry> live;
    live.reserve(s.volatile_keys);
    for (const auto &entry : s.map)
        if (entry.second.expire_at != 0) live.emplace_back(entry.second.expire_at, entry.first);
    s.expiries = decltype(s.expiries)(std::greater<Expiry>(), std::move(live));
}

void Keyspace::store(Shard &s, Map::iterator it, std::string_view key, std::string_view value,
                     const SetOptions &options)
{
    if (it == s.map.end()) it = s.map.emplace(std::string(key), Entry{std::string(value), 0}).first;
    else it->second.value.assign(value.data(), value.size());
    if (!options.keep_ttl) set_expiry(s, it, options.ttl_ms > 0 ? clock_.now_ms() + options.ttl_ms : 0);
}

bool Keyspace::set(std::string_view key, std::string_view value, const SetOptions &options)
{
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = find_live(s, key);
    const bool present = it != s.map.end();
    if (options.condition == SetOptions::Condition::IfAbsent && present) return false;
    if (options.condition == SetOptions::Condition::IfPresent && !present) return false;
    store(s, it, key, value, options);
    return true;
}

bool Keyspace::erase(std::string_view key)
{
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = find_live(s, key);
    if (it == s.map.end()) return false;
    erase_entry(s, it);
    return true;
}

bool Keyspace::exists(std::string_view key)
{
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    return find_live(s, key) != s.map.end();
}

IncrStatus Keyspace::incr_by(std::string_view key, long long delta, long long &result)
{
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = find_live(s, key);
    long long current = 0;
    if (it != s.map.end() && !parse_integer(it->second.value, current)) return IncrStatus::NotInteger;
    if ((delta > 0 && current > LLONG_MAX - delta) || (delta < 0 && current < LLONG_MIN - delta))
        return IncrStatus::Overflow;
    result = current + delta;
    // INCR keeps the key's expiry, as Redis does.
    if (it == s.map.end()) s.map.emplace(std::string(key), Entry{integer_text(result), 0});
    else it->second.value = integer_text(result);
    return IncrStatus::Ok;
}

bool Keyspace::expire(std::string_view key, int64_t ttl_ms)
{
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = find_live(s, key);
    if (it == s.map.end()) return false;
    if (ttl_ms <= 0) erase_entry(s, it);
    else set_expiry(s, it, clock_.now_ms() + ttl_ms);
    return true;
}

int64_t Keyspace::ttl_ms(std::string_view key)
{
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = find_live(s, key);
    if (it == s.map.end()) return -2;
    if (it->second.expire_at == 0) return -1;
    int64_t left = it->second.expire_at - clock_.now_ms();
    return left > 0 ? left : 0;
}

bool Keyspace::persist(std::string_view key)
{
    Shard &s = shard_for(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = find_live(s, key);
    if (it == s.map.end() || it->second.expire_at == 0) return false;
    set_expiry(s, it, 0);
    return true;
}

Keyspace::MultiLock::MultiLock(Keyspace &ks, const std::vector<std::string_view> &keys) : ks_(ks)
{
    for (std::string_view key : keys) held_.set(static_cast<size_t>(&ks.shard_for(key) - ks.shards_));
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
        Shard &s = shard_for(p.first);
        store(s, find_live(s, p.first), p.first, p.second, plain);
    }
}

size_t Keyspace::erase_many(const std::vector<std::string_view> &keys)
{
    MultiLock lock(*this, keys);
    size_t n = 0;
    for (std::string_view key : keys) {
        Shard &s = shard_for(key);
        auto it = find_live(s, key);
        if (it == s.map.end()) continue;
        erase_entry(s, it);
        ++n;
    }
    return n;
}

size_t Keyspace::count_existing(const std::vector<std::string_view> &keys)
{
    MultiLock lock(*this, keys);
    size_t n = 0;
    for (std::string_view key : keys) {
        Shard &s = shard_for(key);
        if (find_live(s, key) != s.map.end()) ++n;
    }
    return n;
}

size_t Keyspace::size() const
{
    size_t n = 0;
    for (const Shard &s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        n += s.map.size();
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
        s.map.clear();
        s.expiries = decltype(s.expiries)();
        s.volatile_keys = 0;
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
            auto it = s.map.find(s.expiries.top().second);
            s.expiries.pop();
            if (it == s.map.end() || it->second.expire_at == 0 || it->second.expire_at > now) continue;
            erase_entry(s, it);
            ++deleted;
        }
    }
    expired_.fetch_add(deleted, std::memory_order_relaxed);
    return deleted;
}

} // namespace kvd
