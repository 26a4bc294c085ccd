// SPDX-License-Identifier: MIT
// read_until / read_exactly: the input cut into records for the application.
#include "connection_impl.hpp"

#include <twinwire/connection.hpp>
#include <twinwire/loop.hpp>

#include <event2/buffer.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace twinwire {

void Connection::read_until(std::string delimiter, size_t max_bytes, RecordHandler handler)
{
    if (delimiter.empty()) throw std::invalid_argument("Connection::read_until: empty delimiter");
    if (max_bytes < delimiter.size())
        throw std::invalid_argument("Connection::read_until: max_bytes below the delimiter's size");
    Impl::ReadRequest req;
    req.delimiter = std::move(delimiter);
    req.count = max_bytes;
    req.handler = std::move(handler);
    impl_->set_request(std::move(req));
}

void Connection::read_exactly(size_t n, RecordHandler handler)
{
    if (n == 0) throw std::invalid_argument("Connection::read_exactly: zero bytes");
    Impl::ReadRequest req;
    req.count = n;
    req.handler = std::move(handler);
    impl_->set_request(std::move(req));
}

void Connection::Impl::set_request(ReadRequest req)
{
    if (life.finished()) return;
    in.request = std::make_unique<ReadRequest>(std::move(req));
    // Inside a delivery the loop there serves it; otherwise bytes already
    // buffered are served on the next loop turn (never inside this call).
    if (in.delivering || in.buffer.empty()) return;
    std::weak_ptr<Connection> weak = owner->shared_from_this();
    loop->post([weak] {
        auto c = weak.lock();
        if (!c) return;
        Impl &m = *c->impl_;
        if (m.in.reading && !m.life.finishing() && !m.in.delivering) m.deliver_input();
    });
}

ssize_t Connection::Impl::record_ready(ReadRequest &req)
{
    const size_t have = in.buffer.size();
    if (req.delimiter.empty()) return have >= req.count ? static_cast<ssize_t>(req.count) : 0;
    const size_t dlen = req.delimiter.size();
    // Search only the new bytes (and the tail a delimiter may straddle), and
    // never past the maximum.
    size_t from = req.searched >= dlen ? req.searched - dlen + 1 : 0;
    size_t until = std::min(have, req.count);
    if (until >= dlen && from <= until - dlen) {
        struct evbuffer_ptr start, end;
        evbuffer_ptr_set(in.buffer.raw(), &start, from, EVBUFFER_PTR_SET);
        evbuffer_ptr_set(in.buffer.raw(), &end, until, EVBUFFER_PTR_SET);
        struct evbuffer_ptr at = evbuffer_search_range(in.buffer.raw(), req.delimiter.data(), dlen, &start, &end);
        if (at.pos >= 0) return static_cast<ssize_t>(static_cast<size_t>(at.pos) + dlen);
    }
    req.searched = until;
    if (have < req.count) return 0;
    finish(errc::record_too_long, -EMSGSIZE,
           "read_until: no delimiter within " + std::to_string(req.count) + " bytes (the maximum asked for); " +
               std::to_string(have) + " bytes were buffered unread",
           EndedBy::us, OnClose::post_to_loop);
    return -1;
}

} // namespace twinwire
