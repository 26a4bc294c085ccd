// SPDX-License-Identifier: MIT
#include "collections.hpp"

namespace kvd {

void List::push(const std::vector<std::string_view> &values, bool at_head)
{
    size_t pushed = 0;
    try {
        for (std::string_view v : values) {
            if (at_head) items.emplace_front(v);
            else items.emplace_back(v);
            ++pushed;
        }
    } catch (...) {
        // A push at either end of a deque has no effect when it throws:
        // take back the ones that went in, so the command did nothing.
        for (; pushed > 0; --pushed) {
            if (at_head) items.pop_front();
            else items.pop_back();
        }
        throw;
    }
}

bool List::range(long long start, long long stop, size_t &first, size_t &last) const
{
    const long long n = static_cast<long long>(items.size());
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    if (start < 0) start = 0;
    if (start > stop || start >= n) return false;
    if (stop >= n) stop = n - 1;
    first = static_cast<size_t>(start);
    last = static_cast<size_t>(stop) + 1;
    return true;
}

size_t Set::add(const std::vector<std::string_view> &values)
{
    std::unordered_set<std::string> fresh;
    for (std::string_view v : values)
        if (members.find(std::string(v)) == members.end()) fresh.emplace(v);
    members.reserve(members.size() + fresh.size()); // no rehash (allocation) while merging
    const size_t added = fresh.size();
    members.merge(fresh);
    return added;
}

namespace {

// Lookups in the standard unordered containers take the key type: copy the
// names first, so nothing allocates once removing has begun.
std::vector<std::string> copies(const std::vector<std::string_view> &names)
{
    return std::vector<std::string>(names.begin(), names.end());
}

using ScoreKey = std::pair<double, std::string_view>;

} // namespace

size_t Set::remove(const std::vector<std::string_view> &values)
{
    size_t removed = 0;
    for (const std::string &v : copies(values)) removed += members.erase(v);
    return removed;
}

std::unordered_set<std::string>::node_type Set::pop_random(std::minstd_rand &random)
{
    // A random non-empty bucket, then a random member of it: no walk over
    // the whole set (the load factor keeps buckets about as many as members).
    const size_t buckets = members.bucket_count();
    size_t b = 0;
    do {
        b = std::uniform_int_distribution<size_t>(0, buckets - 1)(random);
    } while (members.bucket_size(b) == 0);
    auto it = members.begin(b);
    std::advance(it, std::uniform_int_distribution<size_t>(0, members.bucket_size(b) - 1)(random));
    return members.extract(members.find(*it)); // extract() takes no bucket iterator
}

size_t Hash::set(const std::vector<std::pair<std::string_view, std::string_view>> &pairs)
{
    std::unordered_map<std::string, std::string> fresh;
    for (const auto &p : pairs) fresh.insert_or_assign(std::string(p.first), std::string(p.second));
    fields.reserve(fields.size() + fresh.size());
    size_t created = 0;
    while (!fresh.empty()) {
        auto node = fresh.extract(fresh.begin());
        auto it = fields.find(node.key());
        if (it != fields.end()) {
            it->second.swap(node.mapped());
        } else {
            fields.insert(std::move(node));
            ++created;
        }
    }
    return created;
}

size_t Hash::remove(const std::vector<std::string_view> &names)
{
    size_t removed = 0;
    for (const std::string &n : copies(names)) removed += fields.erase(n);
    return removed;
}

size_t SortedSet::add(const std::vector<std::pair<double, std::string_view>> &entries)
{
    std::unordered_map<std::string, double> wanted;
    for (const auto &e : entries) wanted.insert_or_assign(std::string(e.second), e.first);
    decltype(order) fresh_order;
    for (const auto &w : wanted)
        if (scores.find(w.first) == scores.end()) fresh_order.emplace(w.second, w.first);
    scores.reserve(scores.size() + fresh_order.size());
    // Nothing below allocates: nodes move between containers.
    size_t added = 0;
    while (!wanted.empty()) {
        auto node = wanted.extract(wanted.begin());
        auto it = scores.find(node.key());
        if (it == scores.end()) {
            order.insert(fresh_order.extract(fresh_order.find(ScoreKey(node.mapped(), node.key()))));
            scores.insert(std::move(node));
            ++added;
        } else if (it->second != node.mapped()) {
            auto moved = order.extract(order.find(ScoreKey(it->second, it->first)));
            moved.value().first = node.mapped();
            order.insert(std::move(moved));
            it->second = node.mapped();
        }
    }
    return added;
}

size_t SortedSet::remove(const std::vector<std::string_view> &members)
{
    size_t removed = 0;
    for (const std::string &m : copies(members)) {
        auto it = scores.find(m);
        if (it == scores.end()) continue;
        order.erase(order.find(ScoreKey(it->second, it->first)));
        scores.erase(it);
        ++removed;
    }
    return removed;
}

std::pair<double, std::string> SortedSet::pop_min()
{
    auto node = order.extract(order.begin());
    scores.erase(node.value().second);
    return std::move(node.value());
}

const char *type_name(const Collection &c)
{
    static const char *const names[] = {"list", "set", "hash", "zset"};
    return names[c.index()];
}

} // namespace kvd
