// SPDX-License-Identifier: MIT
// A hostile peer of the RMA emulation over TCP: a raw socket that speaks the
// frame format (docs/rma.md) against a server whose connections enable RMA.
// What it sends must cost the server a stated, bounded amount of memory:
// requests it never reads the answers of pause it, then cut it off; a data
// frame of any declared length meets the application's own record limit;
// stream bytes after its end frame never reach the application.
#include "../sanitizer_stretch.hpp"
#include "serve_while.hpp"
#include "socket_client.hpp"
#include "tcp_config.hpp"

#include "rma_frames.hpp"
#include "rma_wire.hpp"

#include <twinwire/runtime.hpp>
#include <twinwire/transport.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

using namespace twinwire;
using namespace twinwire::rma;
using namespace twtest::rma_frames;
using namespace std::chrono_literals;
using twinwire::test::sanitizer_stretch;
using twtest::serve_while;

namespace {

/// Exactly n bytes from a blocking socket, or fewer after 5 s without one.
std::string read_exactly(const SocketClient &c, size_t n)
{
    std::string got;
    while (got.size() < n) {
        pollfd p{c.fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0) break;
        char buf[4096];
        ssize_t r = ::recv(c.fd, buf, std::min(sizeof buf, n - got.size()), 0);
        if (r <= 0) break;
        got.append(buf, static_cast<size_t>(r));
    }
    return got;
}

/// Sends `unit` again and again, never reading, until `max_total` bytes
/// went out, the connection failed, the server's connection `ended`, or
/// `bound` passed.  *longest_wait: the longest time the socket took nothing
/// (the server was not reading).  Returns the bytes sent.
size_t send_until_ended(int fd, const std::string &unit, size_t max_total, const std::atomic<bool> &ended,
                        std::chrono::milliseconds bound, std::chrono::milliseconds *longest_wait)
{
    using clock = std::chrono::steady_clock;
    size_t sent = 0, at = 0;
    const auto until = clock::now() + bound;
    auto progress = clock::now();
    *longest_wait = std::chrono::milliseconds(0);
    while (sent < max_total && !ended && clock::now() < until) {
        ssize_t n = ::send(fd, unit.data() + at, unit.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            sent += static_cast<size_t>(n);
            at = (at + static_cast<size_t>(n)) % unit.size();
            progress = clock::now();
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) break;
        pollfd p{fd, POLLOUT, 0};
        int r = poll(&p, 1, 20);
        auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - progress);
        *longest_wait = std::max(*longest_wait, waited);
        if (r < 0 || (r > 0 && (p.revents & (POLLERR | POLLHUP)))) break;
    }
    return sent;
}

size_t rss_bytes()
{
    long pages = 0, resident = 0;
    FILE *f = std::fopen("/proc/self/statm", "r");
    if (f) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return static_cast<size_t>(resident) * 4096;
}

bool wait_for(const std::atomic<bool> &flag, std::chrono::milliseconds bound)
{
    auto until = std::chrono::steady_clock::now() + bound;
    while (!flag && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
    return flag;
}

/// A server whose connections enable RMA and expose 4096 bytes, sending the
/// descriptor as their first stream bytes; it records how its one
/// connection ended and the most output it ever held.
struct Server {
    Runtime rt;
    std::shared_ptr<Listener> listener;
    std::string memory = std::string(4096, 'm');
    std::weak_ptr<Connection> conn;
    RmaExposurePtr exposure;
    CloseInfo end;
    std::atomic<bool> ended{false};
    size_t max_output = 0;
    // When the server last took a byte off the wire, and when it ended:
    // measured on the server's loop, so a busy machine cannot shorten it.
    uint64_t bytes_read = 0;
    std::chrono::steady_clock::time_point last_read{}, ended_at{};
    size_t rss_base = 0, rss_max = 0;
    std::function<void(const ConnectionPtr &)> setup;
    std::unique_ptr<Timer> sampler;

    static Config config(size_t limit, unsigned stall_ms)
    {
        Config c = tcp_config(1);
        c.set("write_buffer_limit", std::to_string(limit));
        c.set("shutdown_timeout_ms", std::to_string(stall_ms));
        return c;
    }

    Server(size_t limit, unsigned stall_ms) : rt(config(limit, stall_ms))
    {
        rt.start();
        sampler = std::make_unique<Timer>(rt.loop(0), [this] {
            if (auto c = conn.lock()) {
                max_output = std::max(max_output, c->output_queued());
                uint64_t now_read = c->stats().bytes_received;
                if (now_read != bytes_read) {
                    bytes_read = now_read;
                    last_read = std::chrono::steady_clock::now();
                }
            }
            if (rss_base) rss_max = std::max(rss_max, rss_bytes());
        });
        listener = rt.listen({}, [this](const ConnectionPtr &c) {
            std::string why;
            if (!c->enable_rma(&why)) FAIL("enable_rma: " << why);
            conn = c;
            exposure = c->expose(&memory[0], memory.size(), RmaAccess::read_write, &why);
            REQUIRE(exposure);
            c->write(exposure->descriptor());
            c->on_close([this](Connection &, const CloseInfo &info) {
                end = info;
                ended_at = std::chrono::steady_clock::now();
                ended = true;
            });
            rss_base = rss_max = rss_bytes();
            if (setup) setup(c);
        });
        sampler->start(2ms, 2ms);
    }

    /// The client's side of the start: the server's hello and descriptor
    /// read, this side's hello sent.  The descriptor, or "" on failure.
    static std::string start(const SocketClient &c)
    {
        std::string got = read_exactly(c, 24 + kHeaderSize + kDescriptorSize);
        if (got.size() != 24 + kHeaderSize + kDescriptorSize || !c.send_all(hello())) return {};
        return got.substr(24 + kHeaderSize);
    }
};

enum Kind { refused_read, refused_write, empty_write };

/// What a peer that sends requests of one kind and never reads did to a
/// server with write_buffer_limit `kLimit`.
struct Unread {
    static constexpr size_t kLimit = 256 * 1024;
    unsigned stall_ms = static_cast<unsigned>(1000 * sanitizer_stretch());
    Server server{kLimit, stall_ms};
    size_t sent = 0;
    std::chrono::milliseconds longest_wait{0};
    std::string client_error;

    explicit Unread(Kind kind)
    {
        serve_while(server.rt, [&] {
            SocketClient client(server.listener->port());
            std::string desc = Server::start(client);
            Descriptor d;
            std::string why;
            if (!decode(desc, &d, &why)) {
                client_error = "no descriptor from the server: " + why;
                return;
            }
            // One unit of requests: 64 KiB of frames of one kind.
            std::string unit;
            for (uint64_t tag = 1; unit.size() < 65536; ++tag) {
                std::string p;
                put_u64(p, kind == empty_write ? d.id : d.id + 7);
                put_u64(p, kind == empty_write ? d.key : 0);
                put_u64(p, kind == empty_write ? 4096 : 0);
                if (kind == refused_read) {
                    put_u64(p, 64);
                    unit += frame(Frame::read_req, 0, tag, p);
                } else {
                    unit += frame(Frame::write_data, kLast, tag, p);
                }
            }
            // 64 MiB of requests answered at once would queue 20-140 MiB.
            // Paused, the server cuts the peer off after stall_ms without progress.
            const auto bound = std::chrono::milliseconds(10 * stall_ms + 10000);
            sent = send_until_ended(client.fd, unit, 64u << 20, server.ended, bound, &longest_wait);
            wait_for(server.ended, bound);
        });
    }
};

/// docs/rma.md's bound for a server with write_buffer_limit `limit`: the
/// output, one read event (4 MiB + read_buffer_size), a frame, the tables.
constexpr size_t memory_bound(size_t limit)
{
    return limit + (4u << 20) + (64u << 10) + 2 * (kHeaderSize + kMaxPayload) + (2u << 20);
}

} // namespace

TEST_CASE("a peer that sends RMA requests and never reads the answers is paused at write_buffer_limit, then cut off "
          "after shutdown_timeout_ms",
          "[rma-limits]")
{
    const Kind kind = GENERATE(refused_read, refused_write, empty_write);
    Unread run(kind);
    INFO("sent " << run.sent << " bytes of requests; the server held at most " << run.server.max_output
                 << " bytes of output; the socket took nothing for up to " << run.longest_wait.count() << " ms");
    REQUIRE(run.client_error.empty());
    // The server stopped reading from the peer until it cut it off.
    const auto unread_for =
        std::chrono::duration_cast<std::chrono::milliseconds>(run.server.ended_at - run.server.last_read);
    INFO("the server read nothing for the last " << unread_for.count() << " ms");
    CHECK(unread_for.count() >= run.stall_ms / 2);
    CHECK(run.sent < (64u << 20));
    // The answers count against write_buffer_limit: past it by one answer at most.
    CHECK(run.server.max_output < Unread::kLimit + kHeaderSize + 4 + 200);
    REQUIRE(run.server.ended);
    CHECK(run.server.end.code == errc::timed_out);
    CHECK(run.server.end.reason.rfind(
              "RMA: the peer has not read its answers for " + std::to_string(run.stall_ms) + " ms", 0) == 0);
    // Nothing of the connection is kept after it ended.
    CHECK(run.server.conn.expired());
}

// [rss]: resident memory means nothing under a sanitizer (its allocator
// keeps freed memory in quarantine); meson runs these cases only without one.
TEST_CASE("a peer that sends RMA requests and never reads the answers grows the server's resident memory by no more "
          "than the stated bound",
          "[rma-limits][rss]")
{
    Unread run(refused_read);
    INFO("sent " << run.sent << " bytes of requests; resident grew by "
                 << (run.server.rss_max - run.server.rss_base) / 1024 << " KiB");
    REQUIRE(run.client_error.empty());
    REQUIRE(run.server.ended);
    // 24 MiB of slack for the allocator and the test itself.
    CHECK(run.server.rss_max - run.server.rss_base < memory_bound(Unread::kLimit) + (24u << 20));
}

TEST_CASE("a peer that reads its answers slowly while sending requests flat out is served at its pace; the server "
          "holds no more of its requests than one read event",
          "[rma-limits][rss]")
{
    const size_t limit = 256 * 1024;
    Server server(limit, static_cast<unsigned>(5000 * sanitizer_stretch()));
    size_t sent = 0, answers = 0;
    std::string client_error;
    serve_while(server.rt, [&] {
        SocketClient client(server.listener->port());
        if (Server::start(client).size() != kDescriptorSize) {
            client_error = "no descriptor from the server";
            return;
        }
        std::string unit;
        for (uint64_t tag = 1; unit.size() < 65536; ++tag) {
            std::string p;
            for (uint64_t v : {uint64_t(99), uint64_t(0), uint64_t(0), uint64_t(64)}) put_u64(p, v);
            unit += frame(Frame::read_req, 0, tag, p);
        }
        // Every resume of the server reads more of what waits in its
        // socket; 64 KiB taken every 10 ms makes hundreds of them.
        auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
        size_t at = 0;
        char buf[65536];
        while (std::chrono::steady_clock::now() < until) {
            pollfd p{client.fd, POLLOUT, 0};
            while (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT)) {
                ssize_t n = ::send(client.fd, unit.data() + at, unit.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n <= 0) break;
                sent += static_cast<size_t>(n);
                at = (at + static_cast<size_t>(n)) % unit.size();
            }
            ssize_t got = ::recv(client.fd, buf, sizeof buf, MSG_DONTWAIT);
            if (got > 0) answers += static_cast<size_t>(got);
            if (got == 0) {
                client_error = "the server closed the connection";
                return;
            }
            std::this_thread::sleep_for(10ms);
        }
    });
    INFO("sent " << sent << " bytes of requests, read " << answers << " bytes of answers; the server held at most "
                 << server.max_output << " bytes of output; resident grew by "
                 << (server.rss_max - server.rss_base) / 1024 << " KiB");
    CHECK(client_error.empty());
    CHECK(answers > 0);
    CHECK(server.max_output < limit + kHeaderSize + 4 + 200);
    CHECK(server.rss_max - server.rss_base < memory_bound(limit) + (24u << 20));
}

TEST_CASE("a data frame that declares 4 GiB meets the application's record limit as on a raw stream", "[rma-limits]")
{
    Server server(64u << 20, 5000);
    std::atomic<bool> record{false};
    server.setup = [&](const ConnectionPtr &c) {
        c->read_until("\n", 300, [&](Connection &, std::string) { record = true; });
    };
    serve_while(server.rt, [&] {
        SocketClient client(server.listener->port());
        if (Server::start(client).size() != kDescriptorSize) return;
        client.send_all(frame(Frame::data, 0, 0, "", UINT32_MAX));
        std::chrono::milliseconds waited;
        const auto bound = std::chrono::milliseconds(5000 * sanitizer_stretch());
        send_until_ended(client.fd, std::string(65536, 'x'), 64u << 20, server.ended, bound, &waited);
        wait_for(server.ended, bound);
    });
    REQUIRE(server.ended);
    CHECK_FALSE(record);
    CHECK(server.end.code == errc::record_too_long);
    CHECK(server.end.reason.find("no delimiter within 300 bytes") != std::string::npos);
}

TEST_CASE("stream bytes after the peer's end frame close the connection with a protocol error and never reach the "
          "application",
          "[rma-limits]")
{
    Server server(64u << 20, 5000);
    std::string got;
    bool eof = false;
    server.setup = [&](const ConnectionPtr &c) {
        c->on_data([&](Connection &, Buffer &in) { got += in.take(in.size()); });
        c->on_eof([&](Connection &) { eof = true; });
    };
    serve_while(server.rt, [&] {
        SocketClient client(server.listener->port());
        if (Server::start(client).size() != kDescriptorSize) return;
        client.send_all(frame(Frame::data, 0, 0, "before\n") + frame(Frame::end, 0, 0, "") +
                        frame(Frame::data, 0, 0, "after\n"));
        wait_for(server.ended, std::chrono::milliseconds(5000 * sanitizer_stretch()));
    });
    CHECK(got == "before\n");
    CHECK(eof);
    REQUIRE(server.ended);
    CHECK(server.end.code == errc::protocol_mismatch);
    CHECK(server.end.reason ==
          "RMA: stream bytes after the peer's end of stream (a data frame of 6 bytes after its end frame)");
}

TEST_CASE("a hello of another RMA emulation version is told the versions", "[rma-limits]")
{
    Server server(64u << 20, 5000);
    serve_while(server.rt, [&] {
        SocketClient client(server.listener->port());
        read_exactly(client, 24 + kHeaderSize + kDescriptorSize);
        client.send_all(hello(2));
        wait_for(server.ended, std::chrono::milliseconds(5000 * sanitizer_stretch()));
    });
    REQUIRE(server.ended);
    CHECK(server.end.code == errc::protocol_mismatch);
    CHECK(server.end.reason == "RMA: the peer speaks RMA emulation version 2, this side 1");
}
