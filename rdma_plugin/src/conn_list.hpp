// SPDX-License-Identifier: MIT
// A loop's connections: O(1) insert and erase, and positions, so the tick
// can visit them a slice at a time (loop.cpp).
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

struct tw_conn;

namespace twrdma {

class ConnList {
public:
    void insert(tw_conn *c)
    {
        if (at_.emplace(c, list_.size()).second) list_.push_back(c);
    }
    void erase(tw_conn *c)
    {
        auto it = at_.find(c);
        if (it == at_.end()) return;
        size_t i = it->second;
        at_.erase(it);
        tw_conn *last = list_.back();
        list_.pop_back();
        if (last != c) {
            list_[i] = last;
            at_[last] = i;
        }
    }
    bool empty() const { return list_.empty(); }
    size_t size() const { return list_.size(); }
    tw_conn *operator[](size_t i) const { return list_[i]; }
    std::vector<tw_conn *>::const_iterator begin() const { return list_.begin(); }
    std::vector<tw_conn *>::const_iterator end() const { return list_.end(); }

private:
    std::vector<tw_conn *> list_;
    std::unordered_map<tw_conn *, size_t> at_;
};

} // namespace twrdma
