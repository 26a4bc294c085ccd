// SPDX-License-Identifier: MIT
#include "memory_usage.hpp"

#include <cstdint>

namespace kvd {
namespace {

/// What malloc takes for a request of `n` bytes: glibc adds a size word and
/// rounds up to 16, with 32 bytes at least.
size_t block(size_t n)
{
    size_t chunk = (n + sizeof(size_t) + 15) & ~size_t(15);
    return chunk < 32 ? 32 : chunk;
}

/// The heap bytes of a string beyond its object: none while it fits the
/// small-string buffer inside the object, one block otherwise.
size_t string_heap(const std::string &s)
{
    const size_t inline_capacity = std::string().capacity();
    return s.capacity() > inline_capacity ? block(s.capacity() + 1) : 0;
}

/// The cost of the first `samples` elements (all when 0), scaled to the
/// whole container: Redis' MEMORY USAGE samples the same way, so that a
/// huge collection does not cost a pass over every element.
template <class Container, class Cost> size_t sampled(const Container &c, size_t samples, Cost cost)
{
    size_t seen = 0, bytes = 0;
    for (const auto &element : c) {
        if (samples != 0 && seen == samples) break;
        bytes += cost(element);
        ++seen;
    }
    if (seen == 0 || seen == c.size()) return bytes;
    return static_cast<size_t>(static_cast<double>(bytes) / static_cast<double>(seen) * static_cast<double>(c.size()));
}

/// A node of std::unordered_{set,map}: next pointer, the value, the cached hash.
template <class Value> size_t hash_node() { return block(sizeof(void *) + sizeof(Value) + sizeof(size_t)); }
/// A node of std::set: colour, three links, the value.
template <class Value> size_t tree_node() { return block(4 * sizeof(void *) + sizeof(Value)); }

template <class Table> size_t buckets(const Table &t) { return block(t.bucket_count() * sizeof(void *)); }

size_t collection_bytes(const Collection &collection, size_t samples)
{
    size_t bytes = block(sizeof(Collection));
    if (const List *l = std::get_if<List>(&collection)) {
        // A deque keeps its string objects in 512-byte blocks (16 to a block), listed in a map that
        // libstdc++ keeps at about twice the blocks in use.
        const size_t blocks = l->items.size() * sizeof(std::string) / 512 + 1;
        bytes += blocks * (block(512) + 2 * sizeof(void *));
        bytes += sampled(l->items, samples, [](const std::string &s) { return string_heap(s); });
    } else if (const Set *set = std::get_if<Set>(&collection)) {
        bytes += buckets(set->members);
        bytes += sampled(set->members, samples,
                         [](const std::string &m) { return hash_node<std::string>() + string_heap(m); });
    } else if (const Hash *h = std::get_if<Hash>(&collection)) {
        bytes += buckets(h->fields);
        bytes += sampled(h->fields, samples, [](const std::pair<const std::string, std::string> &f) {
            return hash_node<std::pair<const std::string, std::string>>() + string_heap(f.first) +
                   string_heap(f.second);
        });
    } else if (const SortedSet *z = std::get_if<SortedSet>(&collection)) {
        // Each member twice: in the score table and in the order.
        bytes += buckets(z->scores);
        bytes += sampled(z->scores, samples, [](const std::pair<const std::string, double> &m) {
            return hash_node<std::pair<const std::string, double>>() + tree_node<std::pair<double, std::string>>() +
                   2 * string_heap(m.first);
        });
    }
    return bytes;
}

} // namespace

size_t memory_usage(const Item &item, size_t samples)
{
    // The entry with its key inline, and its slot (hash and pointer) in the table.
    size_t bytes = block(sizeof(Item) + item.key().size()) + sizeof(uint64_t) + sizeof(void *);
    bytes += string_heap(item.value);
    if (item.collection) bytes += collection_bytes(*item.collection, samples);
    return bytes;
}

} // namespace kvd
