// SPDX-License-Identifier: MIT
// One client's MULTI/EXEC state: the commands queued since MULTI (copied,
// since the request bytes they came from are drained) and the keys it
// watches.
#pragma once

#include "keyspace.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvd {

struct Transaction {
    bool active = false;  ///< between MULTI and EXEC / DISCARD
    bool aborted = false; ///< a command was refused while queueing: EXEC answers EXECABORT
    std::vector<std::vector<std::string>> queued;
    size_t queued_bytes = 0;
    std::vector<Keyspace::Watch> watches;

    /// Queue a copy of `args`; false (and nothing queued) when the queue
    /// would pass `max_bytes`: it counts as one request against
    /// kvd.max_request_size, so MULTI cannot hoard memory.
    bool queue(const std::vector<std::string_view> &args, size_t max_bytes)
    {
        size_t bytes = 0;
        for (std::string_view a : args) bytes += a.size() + sizeof(std::string);
        if (bytes > max_bytes || queued_bytes > max_bytes - bytes) return false;
        queued.emplace_back(args.begin(), args.end());
        queued_bytes += bytes;
        return true;
    }
    /// After EXEC or DISCARD: no transaction, nothing watched.
    void reset()
    {
        active = aborted = false;
        std::vector<std::vector<std::string>>().swap(queued);
        queued_bytes = 0;
        watches.clear();
    }
};

} // namespace kvd
