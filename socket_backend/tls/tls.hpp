// SPDX-License-Identifier: MIT
// The tls transport's objects: each wraps the inner transport's object of
// the same kind.  A connection adds an OpenSSL session whose records go
// through two memory BIOs, to and from the inner connection, so TLS runs
// over any transport.  Over a TCP inner connection, where the kernel offers
// the tls ULP, the session reads and writes the socket itself instead
// (direct.cpp), so that OpenSSL can hand the record layer to the kernel.
#pragma once

#include "ops.h"
#include "settings.hpp"

#include <openssl/ssl.h>

#include <atomic>
#include <pthread.h>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tls {

/// Sessions a client may resume, by peer (address and server name); any
/// loop thread stores and takes them.
class SessionStore {
public:
    ~SessionStore();
    void put(const std::string &peer, SSL_SESSION *session); ///< takes the reference
    SSL_SESSION *get(const std::string &peer);               ///< a new reference, or nullptr

private:
    std::mutex mutex_;
    std::unordered_map<std::string, SSL_SESSION *> sessions_;
};

/// Totals over every connection (any loop thread adds to them).
struct Totals {
    std::atomic<uint64_t> open{0}, accepted{0}, connected{0}, resumed{0};
    std::atomic<uint64_t> failed{0}, verify_failed{0}, not_tls{0}, timed_out{0}, refused_busy{0};
    /// Sessions on the socket itself (direct.cpp), and of them those whose
    /// sending and receiving OpenSSL handed to the kernel.
    std::atomic<uint64_t> direct{0}, ktls_send{0}, ktls_receive{0};
};

/// The two SSL_CTXs: one per role, built from the settings' files.
struct Contexts {
    SSL_CTX *server = nullptr; ///< nullptr without tls.cert_file: this end cannot listen
    SSL_CTX *client = nullptr;
    std::string certificate; ///< "subject, expires ..." of tls.cert_file
};

/// The contexts new sessions are made from.  A reload builds a whole new pair
/// and swaps it in while loop threads make sessions; sessions already made
/// keep the contexts they hold a reference to.
class Credentials {
public:
    ~Credentials();
    /// Build both contexts from the files `s` names and use them from now on;
    /// on failure (-TW_ECONFIG or -ENOMEM, and why) the current ones stay.
    int load(const Settings &s, std::string *why);
    /// A session of the current context for this role; nullptr when this end
    /// has no server context (no tls.cert_file) or memory is short.
    SSL *new_ssl(bool server);
    bool can_serve() const;
    std::string certificate() const; ///< for describe and the start-up line
    std::string reloads() const;     ///< "reloads=N failed=M (last: why)"

private:
    static void free(Contexts &ctx);
    mutable std::mutex mutex_;
    Contexts current_;
    uint64_t loads_ = 0, failed_ = 0;
    std::string last_failure_;
};

} // namespace tls

struct tw_transport {
    const tw_host *host;
    const tw_transport_ops *inner;
    tw_transport *inner_t = nullptr;
    tls::Settings settings;
    tls::Credentials credentials;
    tls::SessionStore sessions;
    std::atomic<uint64_t> handshakes_in_flight{0};
    tls::Totals totals;
    /// tls.ktls = auto and the kernel offers the tls ULP: sessions over TCP go direct.
    bool kernel_tls = false;
};

struct tw_transport_loop {
    tw_transport *t;
    tw_loop *loop;
    tw_transport_loop *inner;
    /// Connections that may have events no fd announces (decrypted bytes,
    /// room to write, a failure to report), looked at before the loop sleeps.
    std::vector<tw_conn *> active;
    /// Closed by the host with records still to send: flushed, then closed.
    std::vector<tw_conn *> lingering;
    /// Connections holding small writes of this loop turn (tw_conn::staged),
    /// sealed into records before the loop waits.
    std::vector<tw_conn *> staging;
    /// Counts the loop's turns (tls_has_pending runs in each): tells a
    /// connection's first write of a turn from those that follow it.
    uint64_t turn = 0;
    /// tls_writev gathers its pieces here for one SSL_write.  A member, not a
    /// thread_local: LeakSanitizer (gcc 12) crashed at exit scanning the
    /// dynamic TLS of a dlopen'd plugin.
    std::string gather;
    /// The thread this loop's direct sessions blocked SIGPIPE on (direct.cpp).
    pthread_t sigpipe_blocked_on{};
    bool sigpipe_blocked = false;
};

struct tw_listener {
    tw_transport_loop *tl;
    tw_listener *inner;
    tw_incoming_cb on_incoming;
    void *arg;
};

namespace tls {

enum class Phase : uint8_t {
    Connecting,  ///< the inner connection is not up yet
    Handshaking, ///< TLS records are going back and forth
    Up,          ///< TW_EV_CONNECTED owed or reported
    Failed,      ///< TW_EV_ERROR owed or reported; get_error says why
    Lingering    ///< closed by the host, close_notify still going out
};

/// One bit each: what the connection owes the host, and what it has seen.
enum Flag : uint32_t {
    kServer = 1u << 0,
    kOweConnected = 1u << 1,
    kOweError = 1u << 2,
    kInActive = 1u << 3,
    kInFlight = 1u << 4,    ///< counted in handshakes_in_flight
    kTooBusy = 1u << 5,     ///< refused at accept: tls.max_handshakes in flight
    kRxMaybe = 1u << 6,     ///< a read may make progress (records, end or error arrived since it last could not)
    kInnerEof = 1u << 7,    ///< the inner connection ended its stream
    kShutWr = 1u << 8,      ///< close_notify sent (shutdown SHUT_WR)
    kShutWrInner = 1u << 9, ///< shut the inner connection once the close_notify is out
    kSslDead = 1u << 10,    ///< OpenSSL failed fatally: no more SSL_read/SSL_write
    kFirstBytesSeen = 1u << 11,
    kWasUp = 1u << 12,           ///< TW_EV_CONNECTED was owed: READ and WRITE may follow
    kInnerHooked = 1u << 13,     ///< the inner connection calls us back
    kStartPending = 1u << 14,    ///< start_accepted is posted to the connection's loop
    kClosedEarly = 1u << 15,     ///< closed before start_accepted ran, which frees it
    kStaged = 1u << 16,          ///< holds staged plaintext, and is in its loop's staging list
    kWantsWrite = 1u << 17,      ///< direct: OpenSSL waits for room in the socket to go on with the handshake
    kCloseNotifyOwed = 1u << 18, ///< direct: close_notify goes out once the pending write is out
    kKtlsSend = 1u << 19,        ///< direct: the kernel seals this session's records
    kKtlsReceive = 1u << 20      ///< direct: the kernel opens them
};

struct Failure {
    int code = 0;
    std::string text;
};

/// The first certificate that failed verification, from the verify callback.
struct Verification {
    int error = 0;
    int depth = -1;
    std::string subject;
};

struct Counters {
    uint64_t bytes_sent = 0, bytes_received = 0, writes = 0, reads = 0, would_block = 0;
};

} // namespace tls

struct tw_conn {
    tw_transport *t;
    tw_transport_loop *tl;
    tw_conn *inner = nullptr;
    SSL *ssl = nullptr;
    BIO *rbio = nullptr; ///< ciphertext from the peer, waiting for OpenSSL (owned by ssl)
    BIO *wbio = nullptr; ///< ciphertext for the peer, waiting for the inner connection (owned by ssl)
    int fd = -1;         ///< direct: the inner connection's socket, which the session reads and writes; else -1
    /// direct: the bytes of the SSL_write in progress, which the socket did
    /// not take all of; SSL_write is repeated with them until they are out.
    std::string pending_write;
    tw_conn_cb cb = nullptr;
    void *arg = nullptr;
    uint32_t want = TW_EV_READ;         ///< what the host asked for
    uint32_t inner_events = TW_EV_READ; ///< what we asked the inner connection for
    uint32_t flags = 0;                 ///< tls::Flag
    tls::Phase phase = tls::Phase::Connecting;
    int inner_error = 0; ///< the inner connection's read or write error
    tls::Failure failure;
    tls::Verification verification;
    tw_timer *timer = nullptr; ///< the handshake's deadline, then the linger's
    uint64_t deadline_ns = 0;
    std::string peer;        ///< "127.0.0.1:40312", for messages
    std::string session_key; ///< client: where a resumable session is kept
    std::string not_tls;     ///< why the peer's first bytes are no TLS (first_bytes_verdict)
    tls::Counters counters;
    /// Small writes not sealed yet: a record each would cost a seal, an open
    /// and a send per write, so they wait for the end of the loop's turn.
    std::string staged;
    uint64_t written_turn = ~0ull; ///< tw_transport_loop::turn of the last write
};

namespace tls {

constexpr size_t kRxLimit = 256 * 1024; ///< ciphertext held for OpenSSL before the inner connection is paused
constexpr size_t kTxLimit = 256 * 1024; ///< ciphertext held for the inner connection before write says -EAGAIN
constexpr size_t kChunk = 64 * 1024;
constexpr size_t kStageBelow = 4096;    ///< writes shorter than this may be staged (tw_conn::staged)
constexpr size_t kStageMax = 16 * 1024; ///< staged bytes sealed at once: one full TLS record

inline const tw_host *host_of(const tw_conn *c) { return c->t->host; }
inline bool is_direct(const tw_conn *c) { return c->fd >= 0; }
inline bool has(const tw_conn *c, uint32_t flag) { return (c->flags & flag) != 0; }
/// Ciphertext read from the inner connection, not opened yet (none when direct).
inline size_t rx_held(const tw_conn *c) { return is_direct(c) ? 0 : BIO_ctrl_pending(c->rbio); }
/// What still has to reach the inner connection: ciphertext, or when direct
/// the pending write and a close_notify owed.
inline size_t tx_held(const tw_conn *c)
{
    if (is_direct(c)) return c->pending_write.size() + (has(c, kCloseNotifyOwed) ? 1 : 0);
    return BIO_ctrl_pending(c->wbio);
}
/// What the bound on output counts: records not taken by the inner
/// connection yet, and plaintext staged for the next one.
inline size_t out_held(const tw_conn *c) { return tx_held(c) + c->staged.size(); }
inline const tw_transport_ops &inner_ops(const tw_conn *c) { return *c->t->inner; }

// context.cpp
/// The verify callback's index of the connection in SSL's ex_data.
void attach_conn(SSL *ssl, tw_conn *c);
/// OpenSSL's error queue as one line (and emptied): "certificate verify failed; ...".
std::string drain_errors();
std::string subject_of(X509 *cert);

// kernel_tls.cpp
/// Whether this kernel's TCP offers the tls ULP.
bool kernel_offers_tls();
/// kTLS here, with the reason: "unavailable: ...", "off: ...", or what
/// the sessions of `t` so far did with it (`t` null: what the plugin would do).
std::string kernel_tls_status(const tw_transport *t);

// direct.cpp
/// Once the inner connection is up, before the handshake's first step: put
/// the session on its socket when it is TCP and t->kernel_tls.
void go_direct(tw_conn *c);
/// SSL_write of n bytes (n > 0): n, also when direct and the socket is
/// full (the bytes stay in pending_write until it takes them); or the
/// failure's code.
int ssl_write_all(tw_conn *c, const void *buf, int n);
/// Direct: send the pending write, then the staged writes and the
/// close_notify owed, then shut the inner connection when asked.
void flush_direct(tw_conn *c);
/// Direct: what the inner connection should report now.
uint32_t direct_inner_events(const tw_conn *c);
/// Queue close_notify: written into wbio now, or owed when direct.
void queue_close_notify(tw_conn *c);
/// After OpenSSL met EPIPE writing the socket: take back the SIGPIPE it raised.
void drop_sigpipe();
/// Direct, at close: read and drop what the peer sent (up to a bound), so
/// that closing the socket sends FIN, not the RST unread bytes would cause.
/// Returns true once the peer's stream ended.
bool drain_direct(tw_conn *c);
/// Direct, failed: drop the socket's unread bytes (what a plaintext client
/// sent), so that the close the peer sees is FIN after our alert, not RST.
void discard_input(tw_conn *c);
/// Record what OpenSSL handed to the kernel when the handshake completed.
void note_kernel_tls(tw_conn *c);

// handshake.cpp
/// Make progress on the handshake; may complete it (kOweConnected) or fail it.
void handshake_step(tw_conn *c);
/// The peer's first bytes, once they are there: "" when they start a TLS
/// record (or are not there yet), else why this is no TLS peer.
std::string first_bytes_verdict(tw_conn *c);
/// Why OpenSSL failed (SSL_get_error's `ssl_error`), as a code and a line; logs it.
void fail_from_ssl(tw_conn *c, int ssl_error, const char *during);

// conn.cpp
tw_conn *new_conn(tw_transport *t, tw_transport_loop *tl, bool server);
/// On the accepted connection's own loop, before the host's set_callback
/// (tasks run in order): let the handshake run now; refuse it when busy.
void start_accepted(void *conn);
void fail(tw_conn *c, int code, const std::string &text);
uint32_t own_events(tw_conn *c);
void make_active(tw_conn *c);
void deliver(tw_conn *c);
void free_conn(tw_conn *c);
/// Leave the count of handshakes in flight (once).
void leave_flight(tw_conn *c);

// records.cpp
/// Direct: whether SSL_read's failure (SSL_get_error's, with errno as it
/// was) is the peer ending its stream without close_notify.
bool peer_ended_stream(int ssl_error, int sys);
/// Move ciphertext from the inner connection into rbio (bounded).
void pull(tw_conn *c);
/// Move ciphertext from wbio to the inner connection.
void flush(tw_conn *c);
/// Ask the inner connection for what we need from it now.
void inner_set(tw_conn *c);
/// Seal the staged writes into a record and send it (or drop them once the
/// connection failed); 0, or the failure's code.
int seal_staged(tw_conn *c);
/// seal_staged for every connection of the loop that holds staged writes.
void seal_all_staged(tw_transport_loop *tl);

} // namespace tls
