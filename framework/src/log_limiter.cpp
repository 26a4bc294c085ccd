// SPDX-License-Identifier: MIT
#include "log_limiter.hpp"

#include <cstdio>

namespace twinwire::log {

size_t escape_nonprintable(const char *in, size_t len, char *out, size_t cap, bool double_backslash)
{
    if (cap == 0) return 0;
    size_t n = 0;
    for (size_t i = 0; i < len; ++i) {
        unsigned char c = static_cast<unsigned char>(in[i]);
        char esc[5];
        size_t k;
        if (c >= 0x20 && c < 0x7f && (c != '\\' || !double_backslash)) {
            esc[0] = static_cast<char>(c);
            k = 1;
        } else if (c == '\\' || c == '\n' || c == '\r' || c == '\t') {
            esc[0] = '\\';
            esc[1] = c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
            k = 2;
        } else {
            std::snprintf(esc, sizeof esc, "\\x%02x", c);
            k = 4;
        }
        if (n + k >= cap) break;
        for (size_t j = 0; j < k; ++j) out[n++] = esc[j];
    }
    out[n] = '\0';
    return n;
}

namespace {

// FNV-1a over the source and the message with every run of digits as one '#'.
uint64_t similarity_key(const char *source, const char *msg)
{
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](unsigned char c) {
        h ^= c;
        h *= 1099511628211ull;
    };
    for (const char *p = source; *p; ++p) mix(static_cast<unsigned char>(*p));
    mix(0);
    bool in_digits = false;
    for (const char *p = msg; *p; ++p) {
        bool digit = *p >= '0' && *p <= '9';
        if (digit && in_digits) continue;
        in_digits = digit;
        mix(digit ? '#' : static_cast<unsigned char>(*p));
    }
    return h | 1; // 0 marks a free slot
}

} // namespace

void RateLimiter::configure(unsigned lines, unsigned seconds)
{
    lines_ = lines;
    window_ns_ = uint64_t(seconds) * 1'000'000'000ull;
    reset();
}

void RateLimiter::reset()
{
    slots_.fill(Slot{});
    global_start_ = 0;
    global_lines_ = 0;
    global_suppressed_ = 0;
}

bool RateLimiter::admit(const char *source, const char *msg, uint64_t now_ns, uint64_t *suppressed)
{
    *suppressed = 0;
    if (lines_ == 0 || window_ns_ == 0) return true;
    if (now_ns - global_start_ >= 1'000'000'000ull) {
        global_start_ = now_ns;
        global_lines_ = 0;
    }
    if (global_lines_ >= lines_ * 20) {
        ++global_suppressed_;
        return false;
    }
    uint64_t key = similarity_key(source, msg);
    Slot &s = slots_[key % slots_.size()];
    if (s.key != key) {
        global_suppressed_ += s.suppressed; // reported with the next line written
        s = Slot{key, now_ns, 0, 0};
    } else if (now_ns - s.window_start >= window_ns_) {
        s.window_start = now_ns;
        s.lines = 0;
    }
    if (s.lines >= lines_) {
        ++s.suppressed;
        return false;
    }
    ++s.lines;
    ++global_lines_;
    *suppressed = s.suppressed + global_suppressed_;
    s.suppressed = 0;
    global_suppressed_ = 0;
    return true;
}

} // namespace twinwire::log
