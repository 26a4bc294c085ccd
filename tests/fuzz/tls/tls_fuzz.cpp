// SPDX-License-Identifier: MIT
// fuzz-tls: the tls plugin (its own sources, built in) as server or client
// of one connection whose other end the input drives.  The input is a
// program: the peer's bytes delivered in pieces, corrupted or replaced by
// arbitrary ones; OpenSSL's own peer shaking hands, sending, updating keys,
// renegotiating and closing; the application reading, writing, shutting
// down and closing; the inner connection ending, failing or filling up; the
// clock passing the handshake deadline; loop turns.  What must hold:
// - nothing the plugin reads was not sent by the peer, in order, whatever
//   arrived on the wire, and likewise for what the peer reads;
// - every error event comes with a negative code and words;
// - with a clean wire, once both ends are up, everything sent arrives;
// - at the end every connection, timer, task and in-flight handshake is
//   gone (and LeakSanitizer finds nothing).
#include "fake_wire.hpp"
#include "ops.h"
#include "peer.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

using namespace twfuzz;

namespace {

/// One tls transport as the host sets it up: its configuration, loop and
/// (for a server) listener.  Kept across inputs: init reads files.
struct Variant {
    explicit Variant(bool is_server, std::map<std::string, std::string> settings);
    ~Variant()
    {
        if (listener) tls_listener_close(listener);
        if (tl) tls_loop_detach(tl);
        if (t) tls_fini(t);
    }
    Variant(const Variant &) = delete;
    Variant &operator=(const Variant &) = delete;

    bool server;
    FakeHost host;
    tw_transport *t = nullptr;
    tw_transport_loop *tl = nullptr;
    tw_listener *listener = nullptr;
};

std::map<std::string, std::string> with_defaults(bool server, std::map<std::string, std::string> settings)
{
    const Identities &ids = identities();
    settings.emplace("tls.session_resumption", "no"); // an input's outcome depends on it alone
    if (server || settings.count("tls.cert_file")) {
        settings["tls.cert_file"] = ids.cert;
        settings["tls.key_file"] = ids.key;
    }
    return settings;
}

Variant::Variant(bool is_server, std::map<std::string, std::string> settings)
    : server(is_server), host(with_defaults(is_server, std::move(settings)))
{
    char why[512] = "";
    if (tls_init(host.table(), &t, why, sizeof why) != 0) {
        fprintf(stderr, "fuzz-tls: tls_init: %s\n", why);
        abort();
    }
    expect(tls_loop_attach(t, host.loop(), &tl) == 0, "tls_loop_attach");
    if (server) {
        sockaddr_in any{};
        any.sin_family = AF_INET;
        tw_listen_params p{};
        p.size = sizeof p;
        p.addr = reinterpret_cast<sockaddr *>(&any);
        p.addrlen = sizeof any;
        p.on_incoming = [](tw_listener *, void *) {};
        expect(tls_listen(tl, &p, &listener) == 0, "tls_listen");
    }
}

std::vector<std::unique_ptr<Variant>> &variants()
{
    static std::vector<std::unique_ptr<Variant>> all = [] {
        const std::string ca = identities().cert;
        std::vector<std::unique_ptr<Variant>> v;
        v.push_back(std::make_unique<Variant>(true, std::map<std::string, std::string>{}));
        v.push_back(std::make_unique<Variant>(
            true, std::map<std::string, std::string>{{"tls.verify", "required"}, {"tls.ca_file", ca}}));
        v.push_back(
            std::make_unique<Variant>(true, std::map<std::string, std::string>{{"tls.min_protocol", "1.3"},
                                                                               {"tls.handshake_timeout_ms", "200"}}));
        v.push_back(std::make_unique<Variant>(false, std::map<std::string, std::string>{{"tls.verify", "off"}}));
        v.push_back(
            std::make_unique<Variant>(false, std::map<std::string, std::string>{{"tls.verify", "required"},
                                                                                {"tls.ca_file", ca},
                                                                                {"tls.server_name", "localhost"},
                                                                                {"tls.cert_file", ""}}));
        identities().remove_files(); // read: the plugin keeps its contexts and reloads none
        return v;
    }();
    return all;
}

enum Op : uint8_t {
    kDeliver,     // the peer's ciphertext to the plugin, some of it
    kCorrupt,     // ... with one byte changed
    kInject,      // arbitrary bytes on the wire
    kPeerSend,    // plaintext from the peer
    kPeerControl, // key update, renegotiation, close_notify
    kPeerTake,    // the plugin's ciphertext to the peer
    kAppRead,     // the application reads (read or readv)
    kAppWrite,    // the application writes (write or writev)
    kAppShutdown, // SHUT_WR, SHUT_RD or both
    kInnerEnd,    // the inner connection ends its stream
    kInnerFail,   // the inner connection breaks
    kInnerRoom,   // how much the inner connection takes before -EAGAIN
    kTick,        // time passes
    kTurn,        // the loop turns
    kAppClose,    // the application closes
    kLast = kAppClose
};

class Run {
public:
    Run(Variant &v, FuzzedDataProvider &in)
        : v_(v), in_(in), peer_(!v.server, in.ConsumeBool(), in.ConsumeBool() ? TLS1_2_VERSION : TLS1_3_VERSION)
    {
    }

    void open()
    {
        if (v_.server) {
            expect(tls_accept(v_.listener, v_.tl, &c_) == 0, "tls_accept");
            switch (in_.ConsumeIntegralInRange(0, 2)) {
            case 0: // as the framework does: the accept's tasks, then set_callback
                v_.host.run_tasks();
                tls_set_callback(c_, on_event, this);
                break;
            case 1: // set_callback first (the loop was stopping)
                tls_set_callback(c_, on_event, this);
                v_.host.run_tasks();
                break;
            default: // closed before the accept's task ran
                tls_close(c_);
                c_ = nullptr;
                v_.host.run_tasks();
                return;
            }
        } else {
            sockaddr_in to{};
            to.sin_family = AF_INET;
            to.sin_port = htons(6380);
            to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            tw_connect_params p{};
            p.size = sizeof p;
            p.addr = reinterpret_cast<sockaddr *>(&to);
            p.addrlen = sizeof to;
            p.timeout_ms = 1000;
            expect(tls_connect(v_.tl, &p, &c_) == 0, "tls_connect");
            tls_set_callback(c_, on_event, this);
        }
        wire_ = v_.host.newest_wire(); // the inner connection of c_
        if (!v_.server) notify(TW_EV_CONNECTED | TW_EV_WRITE);
    }

    void step(Op op)
    {
        switch (op) {
        case kDeliver:
        case kCorrupt: {
            std::string bytes = peer_.give(in_.ConsumeIntegralInRange<size_t>(1, 20000));
            if (op == kCorrupt && !bytes.empty()) {
                bytes[in_.ConsumeIntegralInRange<size_t>(0, bytes.size() - 1)] ^=
                    static_cast<char>(in_.ConsumeIntegralInRange(1, 255));
                clean_ = false;
            }
            to_plugin(bytes);
            break;
        }
        case kInject:
            clean_ = false;
            to_plugin(in_.ConsumeRandomLengthString(2048));
            break;
        case kPeerSend:
            peer_.send(in_.ConsumeRandomLengthString(40000));
            break;
        case kPeerControl:
            switch (in_.ConsumeIntegralInRange(0, 2)) {
            case 0:
                peer_.key_update();
                break;
            case 1:
                peer_.renegotiate();
                break;
            default:
                peer_.close_notify();
                break;
            }
            break;
        case kPeerTake: {
            if (!wire_) break; // a closed one still holds what the plugin wrote last (an alert)
            size_t n = in_.ConsumeIntegralInRange<size_t>(1, 1 << 20);
            std::string bytes = wire_->from_plugin.substr(0, n);
            wire_->from_plugin.erase(0, n);
            peer_.take(bytes);
            expect(plugin_sent_.compare(0, peer_.received.size(), peer_.received) == 0,
                   "the peer read bytes the plugin never wrote");
            notify(TW_EV_WRITE);
            break;
        }
        case kAppRead:
            app_read(in_.ConsumeIntegralInRange<size_t>(1, 70000), in_.ConsumeBool());
            break;
        case kAppWrite:
            app_write(in_.ConsumeRandomLengthString(70000), in_.ConsumeIntegralInRange<size_t>(0, 70000));
            break;
        case kAppShutdown:
            if (c_) {
                static const int how[] = {SHUT_WR, SHUT_RD, SHUT_RDWR};
                int rc = tls_shutdown(c_, how[in_.ConsumeIntegralInRange(0, 2)]);
                expect(rc <= 0, "shutdown returned a positive value");
            }
            break;
        case kInnerEnd:
            if (wire_alive()) {
                wire_->ended = true;
                clean_ = false;
                notify(TW_EV_READ);
            }
            break;
        case kInnerFail:
            if (wire_alive()) {
                wire_->error = -ECONNRESET;
                clean_ = false;
                notify(TW_EV_ERROR);
            }
            break;
        case kInnerRoom:
            if (wire_alive()) {
                wire_->room = in_.ConsumeIntegralInRange<size_t>(0, 1 << 20);
                notify(TW_EV_WRITE);
            }
            break;
        case kTick:
            v_.host.advance(in_.ConsumeIntegralInRange<uint64_t>(0, 12'000'000'000ull));
            break;
        case kTurn:
            turn();
            break;
        case kAppClose:
            if (c_) {
                tls_close(c_);
                c_ = nullptr;
            }
            break;
        }
    }

    /// With nothing done to the wire and both ends up, everything either
    /// end sent arrives once the bytes move freely.
    void check_delivery()
    {
        if (!clean_ || !c_ || !up_ || error_ || !peer_.up() || !wire_alive()) return;
        wire_->room = 1 << 20;
        notify(TW_EV_WRITE);
        if (!c_ || !wire_alive()) return;
        for (int round = 0; round < 8; ++round) {
            to_plugin(peer_.give(SIZE_MAX));
            while (c_ && app_read(65536, false) > 0) {
            }
            turn();
            if (!c_ || !wire_alive()) return; // closed by the read's error event
            std::string bytes;
            bytes.swap(wire_->from_plugin);
            peer_.take(bytes);
        }
        if (error_ || peer_.dead()) return; // a close_notify either way ends it early
        expect(plugin_read_ == peer_.sent, "the plugin did not get every byte the peer sent over a clean wire");
        expect(peer_.received == plugin_sent_, "the peer did not get every byte the plugin sent over a clean wire");
    }

    void finish()
    {
        if (c_) tls_close(c_);
        c_ = nullptr;
        v_.host.run_tasks();
        v_.host.advance(10'000'000'000ull); // past the linger of a close with records left over
        v_.host.run_tasks();
        tw_transport_stats stats{};
        stats.size = sizeof stats;
        expect(tls_ctrl(v_.t, nullptr, nullptr, TW_CTRL_GET_TRANSPORT_STATS, &stats, sizeof stats) == 0, "stats");
        expect(stats.connections_open == 0, "a connection outlived its close");
        char text[4096];
        tls_describe(v_.t, text, sizeof text);
        expect(strstr(text, " in_flight=0\n") != nullptr, "a handshake stayed counted in flight");
        v_.host.reset();
    }

private:
    static void on_event(tw_conn *c, uint32_t events, void *arg)
    {
        Run *r = static_cast<Run *>(arg);
        expect(c == r->c_, "an event for a connection that is not open");
        if (events & TW_EV_CONNECTED) {
            expect(!r->up_ && !r->error_, "CONNECTED twice, or after an error");
            r->up_ = true;
        }
        if (events & TW_EV_ERROR) {
            expect(!r->error_, "ERROR reported twice");
            r->error_ = true;
            expect(tls_get_error(c) < 0, "an error event without an error code");
            const char *why = tls_last_error(c);
            expect(why && *why, "an error event without words");
        }
        if ((events & (TW_EV_READ | TW_EV_WRITE)) && !r->up_) broken("READ or WRITE before CONNECTED");
    }

    bool wire_alive() const { return wire_ && v_.host.wire_alive(wire_); }
    void notify(uint32_t events)
    {
        if (wire_alive()) v_.host.notify(wire_, events);
    }

    void to_plugin(const std::string &bytes)
    {
        if (!wire_alive() || bytes.empty()) return;
        wire_->to_plugin += bytes;
        notify(TW_EV_READ);
    }

    ssize_t app_read(size_t len, bool vector)
    {
        if (!c_) return 0;
        std::string buf(len, '\0');
        ssize_t r;
        if (vector && len > 1) {
            iovec iov[2] = {{buf.data(), len / 2}, {buf.data() + len / 2, len - len / 2}};
            r = tls_readv(c_, iov, 2);
        } else {
            r = tls_read(c_, buf.data(), len);
        }
        expect(r <= static_cast<ssize_t>(len), "read returned more than asked");
        if (r > 0) {
            plugin_read_.append(buf, 0, static_cast<size_t>(r));
            expect(peer_.sent.compare(0, plugin_read_.size(), plugin_read_) == 0,
                   "the plugin read bytes the peer never sent");
        }
        return r;
    }

    void app_write(const std::string &data, size_t split)
    {
        if (!c_) return;
        ssize_t r;
        if (split < data.size()) {
            iovec iov[2] = {{const_cast<char *>(data.data()), split},
                            {const_cast<char *>(data.data()) + split, data.size() - split}};
            r = tls_writev(c_, iov, 2);
        } else {
            r = tls_write(c_, data.data(), data.size());
        }
        expect(r <= static_cast<ssize_t>(data.size()), "write took more than it was given");
        if (r > 0) plugin_sent_.append(data, 0, static_cast<size_t>(r));
    }

    void turn()
    {
        v_.host.run_tasks();
        for (int i = 0; i < 4 && tls_has_pending(v_.tl); ++i) tls_process_pending(v_.tl);
    }

    Variant &v_;
    FuzzedDataProvider &in_;
    Peer peer_;
    tw_conn *c_ = nullptr;
    Wire *wire_ = nullptr;
    bool up_ = false, error_ = false;
    bool clean_ = true; ///< nothing was done to the wire but moving the peer's own bytes
    std::string plugin_read_, plugin_sent_;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzedDataProvider in(data, size);
    auto &all = variants();
    Variant &v = *all[in.ConsumeIntegralInRange<size_t>(0, all.size() - 1)];
    {
        Run run(v, in);
        run.open();
        for (int steps = 0; steps < 256 && in.remaining_bytes() > 0; ++steps)
            run.step(static_cast<Op>(in.ConsumeIntegralInRange<int>(0, kLast)));
        run.check_delivery();
        run.finish();
    }
    return 0;
}
