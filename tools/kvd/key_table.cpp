// SPDX-License-Identifier: MIT
#include "key_table.hpp"

#include <cstring>
#include <functional>
#include <new>

namespace kvd {

Item *Item::create(std::string_view key, std::string_view value)
{
    void *memory = ::operator new(sizeof(Item) + key.size());
    Item *item = new (memory) Item();
    item->key_size_ = static_cast<uint32_t>(key.size());
    std::memcpy(reinterpret_cast<char *>(item + 1), key.data(), key.size());
    try {
        item->value.assign(value.data(), value.size());
    } catch (...) {
        destroy(item);
        throw;
    }
    return item;
}

void Item::destroy(Item *item)
{
    item->~Item();
    ::operator delete(item);
}

KeyTable::~KeyTable() { clear(); }

uint64_t KeyTable::hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

size_t KeyTable::index_of(std::string_view key, uint64_t hash) const
{
    if (slots_.empty()) return npos;
    const size_t mask = slots_.size() - 1;
    // The load factor stays below 3/4, so an empty slot ends every probe.
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        const Slot &s = slots_[i];
        if (!s.item) return npos;
        if (s.hash == hash && s.item->key() == key) return i;
    }
}

Item *KeyTable::find(std::string_view key, uint64_t hash) const
{
    size_t i = index_of(key, hash);
    return i == npos ? nullptr : slots_[i].item;
}

Item *KeyTable::insert(std::string_view key, uint64_t hash, std::string_view value)
{
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    Item *item = Item::create(key, value);
    const size_t mask = slots_.size() - 1;
    size_t i = hash & mask;
    while (slots_[i].item) i = (i + 1) & mask;
    slots_[i] = Slot{hash, item};
    ++size_;
    return item;
}

void KeyTable::grow()
{
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{0, nullptr});
    const size_t mask = slots_.size() - 1;
    for (const Slot &s : old) {
        if (!s.item) continue;
        size_t i = s.hash & mask;
        while (slots_[i].item) i = (i + 1) & mask;
        slots_[i] = s;
    }
}

// Backward-shift deletion: no tombstones, so probes stay short after churn.
void KeyTable::erase(std::string_view key, uint64_t hash)
{
    size_t hole = index_of(key, hash);
    if (hole == npos) return;
    Item::destroy(slots_[hole].item);
    const size_t mask = slots_.size() - 1;
    for (size_t j = (hole + 1) & mask; slots_[j].item; j = (j + 1) & mask) {
        size_t home = slots_[j].hash & mask;
        // The entry at j may move back only if its home is not in (hole, j].
        bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (stays) continue;
        slots_[hole] = slots_[j];
        hole = j;
    }
    slots_[hole] = Slot{0, nullptr};
    --size_;
}

void KeyTable::clear()
{
    for (Slot &s : slots_)
        if (s.item) Item::destroy(s.item);
    std::vector<Slot>().swap(slots_);
    size_ = 0;
}

} // namespace kvd
