// SPDX-License-Identifier: MIT
// An open-addressing hash table of keyspace entries.  A lookup touches the
// slot array and then the one entry, whose key is stored inline with it:
// two cache misses where std::unordered_map<std::string, ...> takes four
// (bucket, previous node, node, key bytes) - the daemon's largest cost in
// user space under redis-benchmark.
#pragma once

#include "collections.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvd {

struct Item {
    int64_t expire_at = 0; ///< clock ms; 0 = never
    std::string value;     ///< a string key's value
    /// A list, set, hash or sorted set; nullptr for a string key.  Behind a
    /// pointer so string keys, the common case, stay small.
    std::unique_ptr<Collection> collection;

    std::string_view key() const { return {reinterpret_cast<const char *>(this + 1), key_size_}; }

    /// One allocation for the entry and its key bytes.
    static Item *create(std::string_view key, std::string_view value);
    static void destroy(Item *item);

private:
    Item() = default;
    ~Item() = default;
    uint32_t key_size_ = 0;
};

class KeyTable {
public:
    KeyTable() = default;
    ~KeyTable();
    KeyTable(const KeyTable &) = delete;
    KeyTable &operator=(const KeyTable &) = delete;

    static uint64_t hash(std::string_view key);

    Item *find(std::string_view key, uint64_t hash) const;
    /// Add an entry for a key that is not in the table.
    Item *insert(std::string_view key, uint64_t hash, std::string_view value);
    /// Remove and free the entry of `key` (which must be there).
    void erase(std::string_view key, uint64_t hash);
    void clear();
    size_t size() const { return size_; }

    template <class Fn> void for_each(Fn &&fn) const
    {
        for (const Slot &s : slots_)
            if (s.item) fn(*s.item);
    }
    template <class Fn> void for_each_with_hash(Fn &&fn) const
    {
        for (const Slot &s : slots_)
            if (s.item) fn(s.hash, *s.item);
    }

private:
    struct Slot {
        uint64_t hash;
        Item *item; ///< nullptr: empty
    };
    size_t index_of(std::string_view key, uint64_t hash) const; ///< slot index, or npos
    void grow();
    static constexpr size_t npos = static_cast<size_t>(-1);

    std::vector<Slot> slots_; ///< power-of-two size, linear probing
    size_t size_ = 0;
};

} // namespace kvd
