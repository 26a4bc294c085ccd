// SPDX-License-Identifier: MIT
#include <twinwire/buffer.hpp>

#include <event2/buffer.h>

#include <new>
#include <utility>

namespace twinwire {

Buffer::Buffer() : buf_(evbuffer_new())
{
    if (!buf_) throw std::bad_alloc();
}

Buffer::~Buffer()
{
    if (buf_) evbuffer_free(buf_);
}

Buffer::Buffer(Buffer &&other) noexcept : buf_(std::exchange(other.buf_, evbuffer_new())) {}

Buffer &Buffer::operator=(Buffer &&other) noexcept
{
    std::swap(buf_, other.buf_);
    return *this;
}

size_t Buffer::size() const { return evbuffer_get_length(buf_); }
evbuffer *Buffer::raw() const { return buf_; }

const char *Buffer::contiguous(size_t n)
{
    size_t len = size();
    if (n > len) n = len;
    if (n == 0) return "";
    return reinterpret_cast<const char *>(evbuffer_pullup(buf_, static_cast<ev_ssize_t>(n)));
}

std::string_view Buffer::first_chunk() const
{
    struct evbuffer_iovec v;
    if (evbuffer_peek(buf_, -1, nullptr, &v, 1) < 1 || v.iov_len == 0) return {};
    return {static_cast<const char *>(v.iov_base), v.iov_len};
}

size_t Buffer::peek(void *out, size_t n, size_t from) const
{
    if (from >= size()) return 0;
    struct evbuffer_ptr pos;
    if (evbuffer_ptr_set(buf_, &pos, from, EVBUFFER_PTR_SET) != 0) return 0;
    ev_ssize_t got = evbuffer_copyout_from(buf_, &pos, out, n);
    return got < 0 ? 0 : static_cast<size_t>(got);
}

size_t Buffer::find(std::string_view needle, size_t from) const
{
    if (from > size()) return npos;
    struct evbuffer_ptr start;
    if (evbuffer_ptr_set(buf_, &start, from, EVBUFFER_PTR_SET) != 0) return npos;
    struct evbuffer_ptr hit = evbuffer_search(buf_, needle.data(), needle.size(), &start);
    return hit.pos < 0 ? npos : static_cast<size_t>(hit.pos);
}

void Buffer::drain(size_t n) { evbuffer_drain(buf_, n); }

std::string Buffer::take(size_t n)
{
    if (n > size()) n = size();
    std::string out(n, '\0');
    if (n) evbuffer_remove(buf_, &out[0], n);
    return out;
}

void Buffer::append(const void *data, size_t len)
{
    if (len && evbuffer_add(buf_, data, len) != 0) throw std::bad_alloc();
}

void Buffer::append(Buffer &other)
{
    if (evbuffer_add_buffer(buf_, other.buf_) != 0) throw std::bad_alloc();
}

} // namespace twinwire
