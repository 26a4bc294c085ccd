// SPDX-License-Identifier: MIT
// A byte queue (libevent's evbuffer underneath): what a connection has
// received and not yet consumed, or what it still has to send.
#pragma once

#include <twinwire/export.hpp>

#include <cstddef>
#include <string>
#include <string_view>

struct evbuffer;

namespace twinwire {

class TW_API Buffer {
public:
    Buffer();
    ~Buffer();
    Buffer(Buffer &&other) noexcept;
    Buffer &operator=(Buffer &&other) noexcept;
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;

    size_t size() const;
    bool empty() const { return size() == 0; }

    /// Pointer to the first `n` bytes made contiguous (n <= size()); valid
    /// until the buffer changes.  n = size() when n is larger.
    const char *contiguous(size_t n);
    /// The first contiguous run of bytes, without moving anything.
    std::string_view first_chunk() const;
    /// Copy up to `n` bytes from offset `from` into `out` without consuming
    /// them; returns the number copied.
    size_t peek(void *out, size_t n, size_t from = 0) const;
    /// Offset of `needle` at or after `from`, or npos.
    size_t find(std::string_view needle, size_t from = 0) const;
    static constexpr size_t npos = static_cast<size_t>(-1);

    /// Remove the first `n` bytes (all when n > size()).
    void drain(size_t n);
    /// Remove and return the first `n` bytes.
    std::string take(size_t n);
    void append(const void *data, size_t len);
    void append(std::string_view text) { append(text.data(), text.size()); }
    /// Move all of `other` to the end of this buffer (no copy of the bytes).
    void append(Buffer &other);
    void clear() { drain(size()); }

    evbuffer *raw() const;

private:
    /// The libevent buffer itself, read only inside the library.
    evbuffer *buf_;
};

} // namespace twinwire
