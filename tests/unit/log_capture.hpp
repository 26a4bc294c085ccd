// SPDX-License-Identifier: MIT
// Collects log lines written while it exists (tests assert on what was logged).
#pragma once

#include <twinwire/log.hpp>

#include <mutex>
#include <string>
#include <vector>

struct LogCapture {
    struct Line {
        twinwire::LogLevel level;
        std::string source;
        std::string text;
    };
    std::mutex mutex;
    std::vector<Line> lines;

    LogCapture()
    {
        twinwire::log::reset_rate_limits(); // lines an earlier test repeated are not held back here
        twinwire::log::set_sink(&LogCapture::sink, this);
    }
    ~LogCapture() { twinwire::log::set_sink(nullptr, nullptr); }

    static void sink(twinwire::LogLevel level, const char *source, const char *line, void *arg)
    {
        auto *self = static_cast<LogCapture *>(arg);
        std::lock_guard<std::mutex> lock(self->mutex);
        self->lines.push_back({level, source, line});
    }

    std::vector<Line> from(const std::string &source)
    {
        std::lock_guard<std::mutex> lock(mutex);
        std::vector<Line> out;
        for (const auto &l : lines)
            if (l.source == source) out.push_back(l);
        return out;
    }

    size_t at_or_above(twinwire::LogLevel level)
    {
        std::lock_guard<std::mutex> lock(mutex);
        size_t n = 0;
        for (const auto &l : lines)
            if (static_cast<int>(l.level) <= static_cast<int>(level)) ++n;
        return n;
    }
};
