// SPDX-License-Identifier: MIT
// Private state of the TCP backend: the four vtable objects and the helpers
// its source files share.  Nothing here crosses the plugin boundary.
#pragma once

#include <twinwire/plugin.h>

#include "tcp_ops.h" // the vtable's functions (C linkage, in namespace twinwire::tcp)

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace twinwire::tcp {

constexpr int kDefaultBacklog = 511;
constexpr uint32_t kDefaultConnectTimeoutMs = 3000;
constexpr size_t kRecvBufSize = 64 * 1024;
constexpr size_t kSendBufDefault = 64 * 1024;
constexpr size_t kSendBufMax = size_t(64) << 20;

/// Settings read from the "tcp." configuration keys at init.
struct Settings {
    bool nodelay = true;                ///< tcp.nodelay
    uint32_t linger_ms = 5000;          ///< tcp.linger_ms: how long close keeps flushing unsent submitted bytes
    bool keepalive = false;             ///< tcp.keepalive: SO_KEEPALIVE on every connection
    uint32_t keepalive_idle_s = 60;     ///< tcp.keepalive_idle_s: silence before the first probe
    uint32_t keepalive_interval_s = 10; ///< tcp.keepalive_interval_s: between probes
    uint32_t keepalive_count = 6;       ///< tcp.keepalive_count: unanswered probes before the reset
};

enum class ConnState {
    Connecting, ///< non-blocking connect in flight
    Announcing, ///< handshake done (accepted, or connected at once), TW_EV_CONNECTED not yet reported
    Open,       ///< TW_EV_CONNECTED reported
    Failed,     ///< connect failed; the socket is gone
    Lingering,  ///< closed by the host, still flushing submitted bytes
};

/// The send buffer of the zero-copy API: lent to the host, then (once
/// submitted) drained into the socket from `off` to `len`.
struct OutBuf {
    char *data = nullptr;
    size_t cap = 0;
    size_t len = 0;
    size_t off = 0;
    bool lent = false;
    size_t unsent() const { return len - off; }
};

/// Bytes received through recv_buf_borrow and not yet consumed.
struct InBuf {
    char *data = nullptr;
    size_t len = 0;
    size_t off = 0;
    bool lent = false;
    size_t left() const { return len - off; }
};

} // namespace twinwire::tcp

struct tw_transport {
    const tw_host *host = nullptr;
    twinwire::tcp::Settings settings;
    std::atomic<uint64_t> open{0};
    std::atomic<uint64_t> accepted{0};
    std::atomic<uint64_t> connected{0};
    std::atomic<uint64_t> aborted{0};
};

struct tw_transport_loop {
    tw_transport *transport = nullptr;
    tw_loop *loop = nullptr;
    tw_conn *lingering = nullptr; ///< closed connections still flushing (linked by linger_next)
};

struct tw_listener {
    tw_transport_loop *tloop = nullptr;
    int fd = -1;
    tw_watch *watch = nullptr;
    tw_incoming_cb on_incoming = nullptr;
    void *arg = nullptr;
    // Out of file descriptors (tcp_listener.cpp): a spare fd to accept and
    // close waiting clients with, and a timer that resumes accepting.
    int reserve_fd = -1;
    tw_timer *resume = nullptr;
    uint64_t backoff_ns = 0;
    // A Unix-domain listener's socket file (unix_path.cpp), removed at close.
    char unix_path[109] = "";
    dev_t unix_dev = 0;
    ino_t unix_ino = 0;
};

struct tw_conn {
    tw_transport_loop *tloop = nullptr; ///< the owning loop (the target loop for accepted ones)
    const tw_host *host = nullptr;
    int fd = -1;
    twinwire::tcp::ConnState state = twinwire::tcp::ConnState::Connecting;

    tw_watch *watch = nullptr;
    uint32_t watched = 0;         ///< TW_WATCH_* currently asked of the watch
    tw_timer *kick = nullptr;     ///< zero-delay timer delivering events no fd announces
    tw_timer *deadline = nullptr; ///< connect timeout, then the linger limit

    tw_conn_cb cb = nullptr;
    void *arg = nullptr;
    uint32_t interest = TW_EV_READ; ///< set_events
    uint32_t pending = 0;           ///< TW_EV_CONNECTED / TW_EV_ERROR still to report

    int error = 0;
    bool incoming = false; ///< made by accept
    bool in_callback = false;
    bool close_requested = false; ///< close() ran inside the callback
    bool wr_shut = false;         ///< the host shut the write side
    bool shut_wr_pending = false; ///< send the FIN once the submitted buffer drained
    uint32_t connect_timeout_ms = 0;

    char peer_text[136] = "";
    char last_error[320] = "";
    tw_conn_stats stats{};
    twinwire::tcp::OutBuf out;
    twinwire::tcp::InBuf in;
    tw_conn *linger_next = nullptr;
};

namespace twinwire::tcp {

// tcp_config.cpp
int read_settings(const tw_host *host, Settings *out, char *why, size_t why_len);

// tcp_conn.cpp: lifecycle and event delivery
tw_conn *conn_new(tw_transport_loop *tloop, int fd, ConnState state);
/// Register the fd watch and the kick timer on the conn's loop (its thread).
int conn_attach_loop(tw_conn *c);
/// Bring the fd watch in line with the state, interest and unsent bytes.
void conn_update_watch(tw_conn *c);
/// Arm the kick timer so that pending events reach the host from the loop.
void conn_kick(tw_conn *c);
/// Record the connection's failure (once) and schedule TW_EV_ERROR.
void conn_fail(tw_conn *c, int err, const char *call);
/// Close the socket and free everything.
void conn_release(tw_conn *c);

/// Take the events still to report (entering Open with TW_EV_CONNECTED).
uint32_t conn_take_pending(tw_conn *c);
/// Arm the deadline timer (created on first use, on the conn's thread).
int conn_arm_deadline(tw_conn *c, uint32_t ms);
/// Stop watching and close the socket (the conn itself stays).
void conn_drop_socket(tw_conn *c);

// tcp_connect.cpp
/// The socket of a connecting conn became writable: the connect finished.
void conn_finish_connect(tw_conn *c);
/// The connect deadline passed.
void conn_connect_timed_out(tw_conn *c);

// tcp_io.cpp
/// Push the submitted send buffer into the socket.  Returns true when
/// nothing is left (and sends a deferred FIN), false otherwise.
bool conn_flush_out(tw_conn *c);
/// Send through sendmsg(MSG_NOSIGNAL); counts the stats; fails the conn on
/// a hard error.  Returns bytes sent or a negative code.
ssize_t conn_send_iov(tw_conn *c, const struct iovec *iov, int iovcnt, const char *call);

// unix_path.cpp
/// Before binding a Unix path: remove a stale socket file (nobody listens),
/// -EADDRINUSE for a live one or a file that is not a socket.  0 for other
/// addresses.
int unix_path_prepare(const struct sockaddr *sa, uint32_t len);
/// After binding: remember the file, so that close removes only it.
void unix_path_remember(tw_listener *l, const struct sockaddr *sa, uint32_t len);
void unix_path_remove(tw_listener *l);

// tcp_errors.cpp
/// "recv (peer 10.0.0.1:80): Connection reset by peer (ECONNRESET); hint: ..."
void format_error(char *out, size_t len, const char *call, const char *where, int err);
/// A short hint for an errno value, "" when there is none.
const char *hint_for(int err);

// sockaddr_text.cpp
/// "10.0.0.1:80", "[::1]:80"; "?" for other families.
void sockaddr_text(const struct sockaddr *sa, char *out, size_t len);
/// The length a sockaddr of this family needs, 0 for unsupported families.
uint32_t sockaddr_len_for(const struct sockaddr *sa);
/// getsockname / getpeername into the ABI's (addr, uint32_t *len).
int socket_name(int fd, bool peer, struct sockaddr *addr, uint32_t *addrlen);

/// Log through the host's vlog when it has one (ABI 1.1), else log.
void log_line(const tw_host *host, int level, const char *fmt, ...) TW_PRINTF(3, 4);

/// Set TCP_NODELAY; returns 0 or -errno.
int set_nodelay(int fd, bool on);
/// The per-connection socket options of `s` (TCP_NODELAY, keepalive) on a
/// new TCP socket; nothing on other families (a Unix socket).  Best effort:
/// a failure is logged at debug, the connection goes on.
void apply_socket_options(const tw_host *host, const Settings &s, int fd);

} // namespace twinwire::tcp
