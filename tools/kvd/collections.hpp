// SPDX-License-Identifier: MIT
// The values a key can hold besides a string: lists, sets, hashes and sorted
// sets, as Redis has them.  Each change either happens whole or not at all
// when memory runs out (std::bad_alloc), so a client cut off for lack of
// memory never leaves half a command behind: allocations come first, then
// steps that cannot throw.
#pragma once

#include <cstddef>
#include <deque>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace kvd {

struct List {
    std::deque<std::string> items;

    bool empty() const { return items.empty(); }
    size_t size() const { return items.size(); }
    /// Push every value at the head (each one in turn, as LPUSH) or the tail.
    void push(const std::vector<std::string_view> &values, bool at_head);
    /// Normalise Redis' [start, stop] (negative counts from the end) into
    /// [first, last); false when the range is empty.
    bool range(long long start, long long stop, size_t &first, size_t &last) const;
};

struct Set {
    std::unordered_set<std::string> members;

    bool empty() const { return members.empty(); }
    size_t size() const { return members.size(); }
    /// Members added (those not there already).
    size_t add(const std::vector<std::string_view> &values);
    size_t remove(const std::vector<std::string_view> &values);
    /// Give back buckets when the set shrank to a small part of them, so a
    /// random pick finds a member in a few tries (may throw: call before
    /// changing anything).
    void compact()
    {
        if (members.size() * 8 < members.bucket_count()) members.rehash(0);
    }
    /// Take out a member chosen at random (the set is not empty); putting
    /// the node back with members.insert() cannot throw.
    std::unordered_set<std::string>::node_type pop_random(std::minstd_rand &random);
};

struct Hash {
    std::unordered_map<std::string, std::string> fields;

    bool empty() const { return fields.empty(); }
    size_t size() const { return fields.size(); }
    /// Set field/value pairs (a later pair wins); returns the fields created.
    size_t set(const std::vector<std::pair<std::string_view, std::string_view>> &pairs);
    size_t remove(const std::vector<std::string_view> &names);
};

/// By score, then member bytes, as Redis orders; finds (score, string_view)
/// too, so a lookup allocates nothing.
struct ScoreOrder {
    using is_transparent = void;
    template <class A, class B> bool operator()(const A &a, const B &b) const
    {
        if (a.first != b.first) return a.first < b.first;
        return std::string_view(a.second) < std::string_view(b.second);
    }
};

struct SortedSet {
    std::unordered_map<std::string, double> scores;
    std::set<std::pair<double, std::string>, ScoreOrder> order;

    bool empty() const { return scores.empty(); }
    size_t size() const { return scores.size(); }
    /// Add members or move them to their new score; returns the members added.
    size_t add(const std::vector<std::pair<double, std::string_view>> &entries);
    size_t remove(const std::vector<std::string_view> &members);
    /// Remove the member with the lowest score (the set is not empty).
    std::pair<double, std::string> pop_min();
};

using Collection = std::variant<List, Set, Hash, SortedSet>;

/// What TYPE answers for a collection.
const char *type_name(const Collection &c);

} // namespace kvd
