// SPDX-License-Identifier: MIT
// The Connection's input helpers (read_until, read_exactly), write
// watermarks and read/write/idle timeouts, over real loops and sockets.
#include "../sanitizer_stretch.hpp"
#include "socket_client.hpp"
#include "tcp_config.hpp"

#include <twinwire/runtime.hpp>

#include "serve_while.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

using namespace twinwire;
using twtest::serve_while;
using namespace std::chrono_literals;

namespace {

// Answers every line with "<line>|" (the delimiter kept), one request at a time.
// The function holds itself weakly and the pending request strongly: no
// cycle to break, so a test may replace on_close.
void serve_lines(const ConnectionPtr &c, size_t max)
{
    auto next = std::make_shared<std::function<void(Connection &)>>();
    std::weak_ptr<std::function<void(Connection &)>> weak = next;
    *next = [max, weak](Connection &conn) {
        auto self_fn = weak.lock();
        conn.read_until("\r\n", max, [self_fn](Connection &self, std::string line) {
            self.write(line + "|");
            (*self_fn)(self);
        });
    };
    (*next)(*c);
}

} // namespace

TEST_CASE("read_until hands over each line with its delimiter, also when a delimiter is split across reads",
          "[connection][io]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    auto listener = rt.listen({}, [](const ConnectionPtr &c) { serve_lines(c, 64); });
    std::string got;
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        client.send_all("one\r\ntwo\r");
        std::this_thread::sleep_for(50ms); // two reads: the delimiter straddles them
        client.send_all("\nthree\r\nfour");
        client.shutdown_write();
        got = client.read_to_end(5000);
    });
    CHECK(got == "one\r\n|two\r\n|three\r\n|");
}

TEST_CASE("a line longer than read_until's maximum closes the connection with EMSGSIZE naming the limit",
          "[connection][io]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    CloseInfo end;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        serve_lines(c, 16);
        c->on_close([&](Connection &, const CloseInfo &info) { end = info; });
    });
    std::string got;
    bool ended = false;
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        client.send_all("short\r\n" + std::string(40, 'x'));
        got = client.read_to_end(5000, &ended);
    });
    CHECK(got == "short\r\n|"); // the answer queued before the overflow still went out
    CHECK(ended);
    CHECK(end.error == -EMSGSIZE);
    INFO(end.reason);
    CHECK(end.reason.find("no delimiter within 16 bytes") != std::string::npos);
    CHECK(end.reason.find("40 bytes were buffered unread") != std::string::npos);
}

TEST_CASE("read_exactly reads length-prefixed frames and on_data gets what follows when nothing is asked for",
          "[connection][io]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    std::vector<std::string> frames;
    std::string rest;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        // A 1-byte length, then that many bytes; twice, then raw bytes.
        auto frame = std::make_shared<std::function<void(Connection &)>>();
        *frame = [&, frame](Connection &conn) {
            conn.read_exactly(1, [&, frame](Connection &self, std::string len) {
                self.read_exactly(static_cast<unsigned char>(len[0]), [&, frame](Connection &s, std::string body) {
                    frames.push_back(body);
                    if (frames.size() < 2) (*frame)(s);
                    else *frame = nullptr;
                });
            });
        };
        (*frame)(*c);
        c->on_data([&](Connection &, Buffer &in) { rest += in.take(in.size()); });
    });
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        client.send_all(std::string("\x05hel", 4));
        std::this_thread::sleep_for(30ms);
        client.send_all(std::string("lo\x03"
                                    "abcraw",
                                    9));
        client.shutdown_write();
        client.read_to_end(5000);
    });
    CHECK(frames == std::vector<std::string>{"hello", "abc"});
    CHECK(rest == "raw");
}

TEST_CASE("output above the high watermark blocks writes and on_write_low runs once the peer read it down",
          "[connection][io]")
{
    Config config = tcp_config(1);
    config.set("write_high_watermark", "256k");
    config.set("write_low_watermark", "64k");
    Runtime rt(config);
    rt.start();
    bool blocked_after_flood = false, blocked_at_low = true, refused = false;
    size_t queued_at_low = SIZE_MAX;
    int lows = 0;
    const std::string chunk(64 * 1024, 'w');
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        c->on_write_low([&](Connection &conn) {
            ++lows;
            blocked_at_low = conn.write_blocked();
            queued_at_low = conn.output_queued();
            conn.close();
        });
        // The client does not read at first: the socket buffers fill, then ours.
        for (int i = 0; i < 200 && !c->write_blocked(); ++i) refused |= !c->write(chunk);
        blocked_after_flood = c->write_blocked();
    });
    size_t got = 0;
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        std::this_thread::sleep_for(200ms);
        got = client.read_to_end(5000).size();
    });
    CHECK_FALSE(refused);
    CHECK(blocked_after_flood);
    CHECK(lows == 1);
    CHECK_FALSE(blocked_at_low);
    CHECK(queued_at_low <= 64 * 1024);
    CHECK(got > 256 * 1024);
}

TEST_CASE("watermarks that do not satisfy low < high <= write_buffer_limit are refused, in config and per connection",
          "[connection][io]")
{
    Config config = tcp_config(1);
    config.set("write_high_watermark", "128M"); // above the 64M limit
    Runtime bad(config);
    CHECK_THROWS_AS(bad.start(), ConfigError);

    Runtime rt(tcp_config(1));
    rt.start();
    bool equal = true, too_high = true, good = false;
    std::atomic<bool> accepted{false};
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        equal = c->set_write_watermarks(4096, 4096);
        too_high = c->set_write_watermarks(0, size_t(1) << 40);
        good = c->set_write_watermarks(0, 8192);
        accepted = true;
    });
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        // Until the accept handler ran (25 s: below serve_while's watchdog).
        const auto deadline = std::chrono::steady_clock::now() + 25s;
        while (!accepted && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
    });
    REQUIRE(accepted);
    CHECK_FALSE(equal);
    CHECK_FALSE(too_high);
    CHECK(good);
}

TEST_CASE("a read timeout closes a silent connection with ETIMEDOUT naming read_timeout_ms; bytes reset it",
          "[connection][io]")
{
    // Sanitized builds stretch the timeout, and the sends with it: a TSan
    // process on a busy host can sit still for 500 ms, longer than 300 - 100.
    const long long stretch = twinwire::test::sanitizer_stretch(), timeout_ms = 300 * stretch;
    Config config = tcp_config(1);
    config.set("read_timeout_ms", std::to_string(timeout_ms));
    Runtime rt(config);
    rt.start();
    CloseInfo end;
    std::string seen;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        c->on_data([&](Connection &, Buffer &in) { seen += in.take(in.size()); });
        c->on_close([&](Connection &, const CloseInfo &info) { end = info; });
    });
    bool ended = false;
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        for (int i = 0; i < 5 * stretch; ++i) { // 5 x 100 ms a stretch: longer than the timeout, never silent that long
            std::this_thread::sleep_for(100ms);
            client.send_all("k");
        }
        client.read_to_end(20000, &ended);
    });
    CHECK(seen == std::string(5 * stretch, 'k'));
    CHECK(ended);
    CHECK(end.error == -ETIMEDOUT);
    CHECK(end.reason == "read_timeout_ms: nothing received for " + std::to_string(timeout_ms) + " ms");
}

TEST_CASE("a write timeout closes a connection whose peer stops reading, naming write_timeout_ms", "[connection][io]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    CloseInfo end;
    std::atomic<bool> closed{false};
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        c->set_write_timeout(300ms);
        const std::string chunk(1 << 20, 'w');
        for (int i = 0; i < 16; ++i) c->write(chunk); // far more than the socket buffers hold
        c->on_close([&](Connection &, const CloseInfo &info) {
            end = info;
            closed = true;
        });
    });
    bool ended = false;
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        // Reads nothing until the server closed: a read before its timer ran
        // (a fixed 1.5 s once) would be progress, and no timeout would come.
        const auto deadline = std::chrono::steady_clock::now() + 25s;
        while (!closed && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
        client.read_to_end(5000, &ended);
    });
    CHECK(ended);
    CHECK(end.error == -ETIMEDOUT);
    CHECK(end.reason == "write_timeout_ms: queued output made no progress for 300 ms");
}

TEST_CASE("an idle timeout closes a connection with no traffic either way, and not one that is busy",
          "[connection][io]")
{
    const long long stretch = twinwire::test::sanitizer_stretch(), timeout_ms = 300 * stretch; // as for reads
    Config config = tcp_config(1);
    config.set("idle_timeout_ms", std::to_string(timeout_ms));
    Runtime rt(config);
    rt.start();
    std::vector<CloseInfo> ends;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        c->on_data([](Connection &conn, Buffer &in) { conn.write(in); });
        c->on_close([&](Connection &, const CloseInfo &info) { ends.push_back(info); });
    });
    std::string busy_got;
    bool idle_ended = false;
    serve_while(rt, [&] {
        SocketClient idle(listener->port()), busy(listener->port());
        for (int i = 0; i < 6 * stretch; ++i) {
            std::this_thread::sleep_for(100ms);
            busy.send_all("b");
        }
        idle.read_to_end(20000, &idle_ended);
        busy_got = busy.read_count(6 * stretch, 20000);
    });
    CHECK(idle_ended);
    CHECK(busy_got.size() == size_t(6 * stretch));
    REQUIRE(!ends.empty());
    CHECK(ends[0].error == -ETIMEDOUT);
    CHECK(ends[0].reason == "idle_timeout_ms: no traffic either way for " + std::to_string(timeout_ms) + " ms");
}

TEST_CASE("transport_ctrl reaches the transport's own operations: another transport's namespace is -EOPNOTSUPP, "
          "a closed connection -ENOTCONN",
          "[connection][io]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    std::atomic<int> foreign{1}, no_ns{1}, closed{1};
    std::atomic<bool> done{false};
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        uint64_t scratch[8] = {};
        foreign = c->transport_ctrl("rdma", 1, scratch, sizeof scratch);
        no_ns = c->transport_ctrl(nullptr, 1, scratch, sizeof scratch);
        c->close();
        closed = c->transport_ctrl("tcp", 1, scratch, sizeof scratch);
        done = true;
    });
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        const auto deadline = std::chrono::steady_clock::now() + 25s; // below serve_while's watchdog
        while (!done && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
    });
    REQUIRE(done);
    CHECK(foreign == -EOPNOTSUPP);
    CHECK(no_ns == -EINVAL);
    CHECK(closed == -ENOTCONN);
}

namespace {

long thread_minor_faults()
{
    struct rusage ru {};
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_minflt;
}

} // namespace

// Reproduces what a streaming server showed: with libevent chains malloc'd per
// read and freed by the reader, glibc trimmed and re-grew its heap, and about
// 95 % of the bytes received landed in pages the kernel had just faulted in.
// Tagged [page-faults]: meson runs it on its own, and only in builds with
// glibc's allocator (ASan and TSan bring their own, and fault their shadow).
TEST_CASE("a streaming reader reuses its read memory: the bytes it receives do not land in freshly faulted pages",
          "[connection][io][page-faults]")
{
    Runtime rt(tcp_config(1));
    rt.start();
    constexpr size_t kWarm = size_t(16) << 20, kTotal = size_t(128) << 20;
    size_t got = 0;
    long warm_faults = -1, end_faults = -1;
    auto listener = rt.listen({}, [&](const ConnectionPtr &c) {
        c->on_data([&](Connection &, Buffer &in) {
            got += in.size();
            in.drain(in.size());
            if (warm_faults < 0 && got >= kWarm) warm_faults = thread_minor_faults(); // on the loop's thread
            if (end_faults < 0 && got >= kTotal) end_faults = thread_minor_faults();
        });
    });
    serve_while(rt, [&] {
        SocketClient client(listener->port());
        const std::string chunk(size_t(1) << 20, 'x');
        for (size_t sent = 0; sent < kTotal; sent += chunk.size())
            if (!client.send_all(chunk)) break;
        client.shutdown_write();
        client.read_to_end(30000);
    });
    REQUIRE(got == kTotal);
    REQUIRE(warm_faults >= 0);
    REQUIRE(end_faults >= 0);
    const long pages = static_cast<long>((kTotal - kWarm) / static_cast<size_t>(sysconf(_SC_PAGESIZE)));
    INFO("minor faults on the reading thread after the first 16 MiB: " << end_faults - warm_faults << " for " << pages
                                                                       << " pages received");
    CHECK(end_faults - warm_faults < pages / 8);
}
