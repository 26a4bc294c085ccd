// SPDX-License-Identifier: MIT
// pair: connections between the loops of one process, without sockets.
//
// Every connection is a Link with two ends.  Each end has a bounded receive
// ring that the other end writes into (write copies into it; send_buf_get
// lends its free space, so a zero-copy send becomes the peer's data in
// place), under the Link's mutex.  Listeners live in one namespace per
// process (registry.cpp), keyed by address and port.
//
// Events: each loop keeps an "active" list of its connections and
// listeners that may have something to report; the host drains it through
// process_pending_data.  An end on another loop is woken through that
// loop's inbox and one run_in_loop task per batch (wakeups.cpp).
//
// Locks, always taken in this order: the registry mutex, a Link's mutex,
// a loop's inbox mutex.
#pragma once

#include "ops.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace twpair {

constexpr const char *kName = "pair";
constexpr size_t kDefaultBufferSize = size_t(128) << 10;
constexpr int kDefaultBacklog = 511;

struct Settings {
    size_t buffer_size = kDefaultBufferSize; ///< pair.buffer_size: each end's receive ring
};

/// Reads pair.* with the host's config_get; 0, or -TW_ECONFIG with why.
int read_settings(const tw_host *host, Settings *out, char *why, size_t why_len);

/// Something a loop may have to report: a connection or a listener.
struct Waitable {
    enum class Kind { Conn, Listener } kind;
    explicit Waitable(Kind k) : kind(k) {}
    // The owning loop's active list (its thread only).
    Waitable *prev = nullptr, *next = nullptr;
    bool queued = false;
    // In the owning loop's inbox (under its inbox_mutex).
    bool in_inbox = false;
};

/// Bytes travelling toward one end.  Guarded by the Link's mutex.
struct Ring {
    std::unique_ptr<char[]> data; ///< allocated on the first byte
    size_t cap = 0;
    uint64_t head = 0;           ///< next byte to read
    uint64_t tail = 0;           ///< next byte to write
    bool eof = false;            ///< the writer shut down its side: end-of-stream after the bytes
    bool discard = false;        ///< the reader shut down reading: bytes are dropped
    bool send_lent = false;      ///< the writer holds a send buffer at tail
    bool recv_lent = false;      ///< the reader holds a borrowed buffer at head
    bool writer_waiting = false; ///< a write found no room: wake the writer on the next read

    size_t used() const { return static_cast<size_t>(tail - head); }
    size_t free_space() const { return cap - used(); }
    /// Start over at offset 0 when nothing is buffered or lent.
    void rewind_if_idle();
};

struct Link {
    std::mutex mutex;
    Ring ring[2];         ///< ring[i]: toward end i
    tw_conn *end[2] = {}; ///< nullptr once that end closed
    bool reset[2] = {};   ///< end i must fail with -ECONNRESET (the other end aborted)
    int ends_open = 2;
};

} // namespace twpair

struct tw_transport {
    const tw_host *host = nullptr;
    twpair::Settings settings;
    std::atomic<uint64_t> open{0}, accepted{0}, connected{0}, aborted{0};
};

struct tw_transport_loop {
    tw_transport *transport = nullptr;
    tw_loop *loop = nullptr;
    uint64_t id = 0;                                   ///< key of the registry: what the wake-up task carries
    twpair::Waitable *head = nullptr, *tail = nullptr; ///< the active list
    twpair::Waitable *delivering = nullptr;            ///< its callback runs; close clears it
    std::mutex inbox_mutex;
    std::vector<twpair::Waitable *> inbox;
    bool task_posted = false;
};

struct tw_listener : twpair::Waitable {
    tw_listener() : Waitable(Kind::Listener) {}
    tw_transport_loop *tloop = nullptr;
    sockaddr_storage addr{}; ///< as bound, port filled in
    uint32_t flags = 0;
    size_t backlog_max = twpair::kDefaultBacklog;
    tw_incoming_cb on_incoming = nullptr;
    void *arg = nullptr;
    std::deque<tw_conn *> backlog; ///< under the registry mutex
};

struct tw_conn : twpair::Waitable {
    tw_conn() : Waitable(Kind::Conn) {}
    tw_transport *transport = nullptr;
    twpair::Link *link = nullptr;
    int side = 0;
    /// The owning loop; nullptr while waiting in a backlog.  Written under
    /// the Link's mutex (accept), read there by the other end.
    tw_transport_loop *tloop = nullptr;
    // Owner thread only.
    tw_conn_cb cb = nullptr;
    void *arg = nullptr;
    uint32_t interest = TW_EV_READ;
    uint32_t pending = 0; ///< TW_EV_CONNECTED / TW_EV_ERROR not yet delivered
    bool up = false;      ///< TW_EV_CONNECTED delivered
    bool wr_shut = false, rd_shut = false;
    bool send_lent = false, recv_lent = false;
    int error = 0;
    std::string last_error;
    sockaddr_storage local{}, peer{};
    tw_conn_stats stats{};

    int peer_side() const { return 1 - side; }
    twpair::Ring &in() { return link->ring[side]; }
    twpair::Ring &out() { return link->ring[1 - side]; }
};

namespace twpair {

// registry.cpp: the process's namespace of listeners, ports and loops.
std::mutex &registry_mutex();
/// Register `l` at l->addr (port 0: a free one is chosen and written
/// back).  -EADDRINUSE when a listener covers the same address and port.
int registry_add_listener(tw_listener *l);
void registry_remove_listener(tw_listener *l);
/// The listener a connect to `to` reaches, or nullptr.  Registry mutex held.
tw_listener *registry_find_listener(const sockaddr_storage &to);
/// A local port for a client end.
uint16_t registry_client_port();
uint64_t registry_add_loop(tw_transport_loop *tl);
void registry_remove_loop(tw_transport_loop *tl);
/// The loop registered as `id`, or nullptr once it detached.
tw_transport_loop *registry_find_loop(uint64_t id);

// addresses.cpp
/// -EINVAL / -EAFNOSUPPORT for what is not a whole IPv4 or IPv6 address.
int check_address(const sockaddr *addr, uint32_t addrlen);
sockaddr_storage copy_address(const sockaddr *addr);
uint16_t port_of(const sockaddr_storage &a);
void set_port(sockaddr_storage &a, uint16_t port);
bool is_wildcard(const sockaddr_storage &a);
bool same_ip(const sockaddr_storage &a, const sockaddr_storage &b);
socklen_t address_length(const sockaddr_storage &a);
std::string address_text(const sockaddr_storage &a);
int copy_out_address(const sockaddr_storage &a, sockaddr *out, uint32_t *len);

// wakeups.cpp
/// Queue `w` on its own loop's active list (owner thread only).
void mark_active(tw_transport_loop *tl, Waitable *w);
void unmark_active(tw_transport_loop *tl, Waitable *w);
/// Wake `w`, owned by `target`, from code running on `current` (either may
/// be nullptr): directly when they are the same loop, else through the
/// target's inbox.  Call with the lock guarding `w`'s lifetime held.
void wake(Waitable *w, tw_transport_loop *target, tw_transport_loop *current);
/// Take `w` out of its loop's inbox and active list before freeing it.
void forget(tw_transport_loop *tl, Waitable *w);

// conn.cpp
tw_conn *conn_new(tw_transport *t, tw_transport_loop *tl);
/// The connection failed: keep the first error, report TW_EV_ERROR once.
int conn_fail(tw_conn *c, int err, const char *call, const std::string &hint);
/// Take up what the other end did (a reset).  Link mutex held.
void conn_sync(tw_conn *c);
/// TW_EV_READ / TW_EV_WRITE that hold now.  Link mutex held.
uint32_t conn_readiness(tw_conn *c);
/// Queue the connection on its own loop when it has a callback.
void conn_self_wake(tw_conn *c);
/// Wake the other end, if it is still there.  Link mutex held.
void conn_wake_peer(tw_conn *c);
/// An end that never got to a loop (a backlog the listener drops): the
/// other end sees a reset.
void conn_abort_unaccepted(tw_conn *c);

} // namespace twpair
