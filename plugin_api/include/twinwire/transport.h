/* SPDX-License-Identifier: MIT */
/**
 * @file twinwire/transport.h
 * The transport vtable: what a twinwire transport (the built-in TCP backend,
 * the RDMA plugin, or yours) implements so that the framework can run any
 * byte-stream protocol over it.
 *
 * # Objects
 *
 *  - tw_transport: one per process per transport, from init() to fini().
 *  - tw_transport_loop: the transport's state for one host event loop
 *    (tw_loop), from loop_attach() to loop_detach().  RDMA keeps its
 *    completion queue here; TCP keeps almost nothing.
 *  - tw_listener: a passive endpoint on one loop.
 *  - tw_conn: one connection, owned by exactly one loop.
 *
 * All four are allocated and freed by the transport; the host never frees
 * transport memory and the transport never frees host memory.
 *
 * # Threads
 *
 * Every operation on a tw_conn, tw_listener or tw_transport_loop is called on
 * the thread of the loop that owns it.  The one exception is accept(), which
 * runs on the listener's thread and hands the new connection to another loop
 * (see accept()).  init, fini, probe and describe run on the host's main
 * thread while no loop runs transport code.
 *
 * # Events
 *
 * A connection reports to the host through one callback (set_callback) with
 * a set of TW_EV_* bits.  The rules, which every transport must keep (the
 * conformance suite checks them):
 *  1. No callback runs before set_callback; what happened before is
 *     remembered and reported after it.
 *  2. No callback runs from inside an operation the host called (no
 *     re-entrancy): events are delivered from the loop.
 *  3. TW_EV_CONNECTED is reported exactly once, when the handshake of a
 *     connect() or accept() completes.  Before it, read and write return
 *     -EAGAIN.
 *  4. TW_EV_READ and TW_EV_WRITE are level-triggered: they are reported,
 *     loop iteration after loop iteration, while the host has asked for them
 *     (set_events) and the condition holds.  TW_EV_READ holds while bytes,
 *     end-of-stream or an error can be read.  TW_EV_WRITE holds while write
 *     would accept at least one byte, or would fail at once (the peer has
 *     gone: as poll() reports POLLOUT with POLLERR), so that a host waiting
 *     to flush learns it.
 *  5. TW_EV_ERROR is reported once, when the connection fails; get_error
 *     and last_error then say why.  Bytes already received stay readable;
 *     after them read returns the error.
 *  6. close() may be called from inside the connection's own callback; the
 *     transport must not touch the connection afterwards.
 *
 * A transport that holds received bytes that no file descriptor will
 * announce (RDMA: data taken off the completion queue while draining it)
 * sets TW_CAP_PENDING_DATA and answers has_pending_data(); the host calls
 * process_pending_data() before it next sleeps, and does not sleep while
 * has_pending_data() is true.
 *
 * # Errors
 *
 * See twinwire/errors.h: 0 or a count on success, a negative errno or
 * negative TW_E* code on failure, -EAGAIN for "not now".  The codes the
 * conformance cases accept are written at each operation below; in short:
 *  - connect/listen with no address, an address length too short for its
 *    family (addrlen 2 for AF_INET), a parameter block smaller than
 *    its TW_*_PARAMS_SIZE_V1, or listen without on_incoming: -EINVAL at
 *    once, nothing created.  A family the transport does not speak: -EAFNOSUPPORT.
 *  - listen on an address and port in use: -EADDRINUSE.
 *  - connect where nothing listens: TW_EV_ERROR with -ECONNREFUSED; never
 *    answered: TW_EV_ERROR with -ETIMEDOUT.  After TW_EV_ERROR, read returns
 *    that same code (once bytes received before it are read), write any
 *    negative code but -EAGAIN.
 *  - write after the peer has gone: a negative code but -EAGAIN (-EPIPE,
 *    -ECONNRESET), never SIGPIPE; after your own shutdown(SHUT_WR): -EPIPE.
 *  - an optional operation the transport leaves NULL: the host's stub
 *    returns -EOPNOTSUPP.  A capability promises its operations:
 *    TW_CAP_HALF_CLOSE needs shutdown, TW_CAP_PENDING_DATA needs
 *    has_pending_data and process_pending_data, TW_CAP_ZERO_COPY_SEND needs
 *    send_buf_get/submit, TW_CAP_ZERO_COPY_RECV needs recv_buf_borrow/return;
 *    the loader refuses a plugin that claims one without them.
 */
#ifndef TWINWIRE_TRANSPORT_H
#define TWINWIRE_TRANSPORT_H

#include <twinwire/abi.h>
#include <twinwire/errors.h>
#include <twinwire/host.h>

#include <sys/types.h>  /* ssize_t */
#include <sys/uio.h>    /* struct iovec */
#include <sys/socket.h> /* struct sockaddr */

TW_BEGIN_DECLS

typedef struct tw_transport tw_transport;
typedef struct tw_transport_loop tw_transport_loop;
typedef struct tw_listener tw_listener;
typedef struct tw_conn tw_conn;

/** Event bits passed to a connection's callback. */
enum tw_conn_events {
    TW_EV_READ = 1u << 0,      /**< read would not return -EAGAIN */
    TW_EV_WRITE = 1u << 1,     /**< write would accept at least one byte */
    TW_EV_CONNECTED = 1u << 2, /**< the connect/accept handshake completed */
    TW_EV_ERROR = 1u << 3      /**< the connection failed; see get_error */
};

/** What a transport can do (tw_transport_ops.caps). */
enum tw_caps {
    /** send_buf_get hands out transport memory: filling it is the only copy. */
    TW_CAP_ZERO_COPY_SEND = 1u << 0,
    /** recv_buf_borrow lends the memory the bytes arrived in. */
    TW_CAP_ZERO_COPY_RECV = 1u << 1,
    /** Listens on and connects to IPv6 addresses. */
    TW_CAP_IPV6 = 1u << 2,
    /** shutdown(SHUT_WR) sends end-of-stream and reading goes on. */
    TW_CAP_HALF_CLOSE = 1u << 3,
    /** Holds received data no fd announces; see has_pending_data. */
    TW_CAP_PENDING_DATA = 1u << 4,
    /** Moves data without the kernel's network stack (RDMA). */
    TW_CAP_KERNEL_BYPASS = 1u << 5,
    /** Can busy-poll for completions while traffic is dense. */
    TW_CAP_BUSY_POLL = 1u << 6,
    /** Does one-sided remote memory itself (rma_* members below, e.g. RDMA
     *  READ/WRITE).  Without it the host emulates RMA over the byte stream
     *  (see "One-sided remote memory" below).  Since ABI 1.3. */
    TW_CAP_RMA = 1u << 7
};

/** Flags for tw_listen_params.flags. */
enum tw_listen_flags {
    TW_LISTEN_V6ONLY = 1u << 0 /**< an IPv6 listener does not take IPv4 */
};

/** Connection callback: `events` is a set of TW_EV_* bits.  Runs on the
 *  connection's loop.  May call any operation on `conn`, including close. */
typedef void (*tw_conn_cb)(tw_conn *conn, uint32_t events, void *arg);

/** Listener callback: at least one connection waits to be accept()ed.
 *  Runs on the listener's loop; level-triggered like TW_EV_READ. */
typedef void (*tw_incoming_cb)(tw_listener *listener, void *arg);

/** Parameters of listen().  The host sets `size` to its sizeof; the
 *  transport refuses (-EINVAL) a size below TW_LISTEN_PARAMS_SIZE_V1 and
 *  reads members past it only behind TW_HAS_MEMBER (see abi.h). */
struct tw_listen_params {
    uint32_t size;               /**< sizeof(struct tw_listen_params) in the caller's build */
    int32_t backlog;             /**< pending-connection queue; <= 0: transport default */
    const struct sockaddr *addr; /**< address and port to bind (port 0: any) */
    uint32_t addrlen;            /**< length of *addr */
    uint32_t flags;              /**< TW_LISTEN_* */
    tw_incoming_cb on_incoming;  /**< required */
    void *arg;                   /**< passed to on_incoming */
};

/** Parameters of connect().  `size` as for tw_listen_params; the minimum is
 *  TW_CONNECT_PARAMS_SIZE_V1. */
struct tw_connect_params {
    uint32_t size;                 /**< sizeof(struct tw_connect_params) in the caller's build */
    uint32_t timeout_ms;           /**< give up (TW_EV_ERROR, -ETIMEDOUT) after this; 0: transport default */
    const struct sockaddr *addr;   /**< peer address and port */
    const struct sockaddr *source; /**< local address to bind, or NULL */
    uint32_t addrlen;              /**< length of *addr */
    uint32_t sourcelen;            /**< length of *source (0 when NULL) */
    uint32_t flags;                /**< reserved, 0 */
    uint32_t reserved;             /**< 0 */
};

#define TW_LISTEN_PARAMS_SIZE_V1  TW_SIZE_THROUGH(struct tw_listen_params, arg)
#define TW_CONNECT_PARAMS_SIZE_V1 TW_SIZE_THROUGH(struct tw_connect_params, reserved)

/**
 * A buffer of the zero-copy API.  The caller sets `size` (its sizeof, e.g.
 * with TW_BUF_INIT) before send_buf_get / recv_buf_borrow; the transport
 * refuses (-EINVAL) a size below TW_BUF_SIZE_V1, fills only the members that
 * fit in `size` and keeps `size` as it was.  For a send buffer the transport
 * fills data/cap and the caller sets len; for a received buffer the
 * transport fills data/len (cap == len).  `token` belongs to the transport.
 */
struct tw_buf {
    uint32_t size;  /**< sizeof(struct tw_buf) in the caller's build */
    uint32_t flags; /**< reserved, 0 */
    void *data;
    size_t len;
    size_t cap;
    uint64_t token;
};

#define TW_BUF_SIZE_V1 TW_SIZE_THROUGH(struct tw_buf, token)
/** An empty tw_buf with its size set: `struct tw_buf b = TW_BUF_INIT;` */
#define TW_BUF_INIT                                                                                                    \
    {                                                                                                                  \
        sizeof(struct tw_buf), 0, NULL, 0, 0, 0                                                                        \
    }

/**
 * # One-sided remote memory (since ABI 1.3: everything in this section)
 *
 * One end EXPOSES a range of its memory to the peer of one connection, for
 * reading, writing or both, and gets a small DESCRIPTOR (at most
 * TW_RMA_DESC_MAX opaque bytes) that the application sends to the peer in
 * its own protocol.  The peer then reads or writes that range with
 * rma_post() on its end of the SAME connection, without the exposing side's
 * code in the path.  The exposing side withdraws the right with
 * rma_revoke().  A descriptor means nothing on any other connection.
 *
 * A transport with TW_CAP_RMA implements rma_expose, rma_revoke and
 * rma_post natively (the loader refuses the capability without them);
 * rma_mem_get/rma_mem_put are optional.  For a transport without it, the
 * host emulates the same semantics over the byte stream, checking bounds,
 * access mode and revocation on the exposing side.
 *
 * Rules every transport keeps (the conformance suite checks them):
 *  1. Everything runs on the connection's loop thread; callbacks run from
 *     the loop, never from inside the call that started the operation.
 *  2. An access outside [0, len) of an exposure, of a mode it was not
 *     exposed for, to a revoked exposure or through another connection
 *     fails with -TW_EREMOTEACCESS and touches no memory outside what was
 *     exposed.  Nothing an application can put in a descriptor reaches any
 *     other memory.
 *  3. rma_revoke(): from its return no NEW access succeeds; its callback
 *     runs once accesses in flight have completed or been cut off, and from
 *     then on the memory is the application's again.
 *  4. A completed rma_post() write has placed its bytes in the peer's
 *     memory; a completed read has its bytes in `local`.  RMA is not ordered
 *     with the byte stream: to tell the peer a write is there, send a
 *     message on the stream from the write's callback.
 *  5. close() withdraws every exposure of the connection before it returns
 *     (even while the transport lingers to flush the stream) and fails the
 *     operations still in flight WITHOUT calling their callbacks (no
 *     callback runs after close); a transport that cannot stop a transfer
 *     into `local` otherwise resets the connection instead of lingering, so
 *     that all memory involved is the application's when close returns.
 *  6. When the connection fails, operations in flight complete with the
 *     connection's error and exposures stop working; rma_revoke() is still
 *     called (its callback runs with 0) to release them.
 *  7. An exposure works for the peer at the latest once the peer has
 *     received stream bytes written after rma_expose() returned (so a
 *     descriptor sent on the stream always finds it).  A descriptor carried
 *     by another path may arrive sooner than that (RDMA binds the window on
 *     the send queue, behind the remote operations posted before it).
 */
/** One exposure, from rma_expose to its revocation.  Opaque.  Since ABI 1.3. */
typedef struct tw_rma_exposure tw_rma_exposure;

/** Access rights of an exposure (rma_expose's `access`).  Since ABI 1.3. */
enum tw_rma_access {
    TW_RMA_READ = 1u << 0, /**< the peer may read the range */
    TW_RMA_WRITE = 1u << 1 /**< the peer may write the range */
};

/** rma_post's operation.  Since ABI 1.3. */
enum tw_rma_op {
    TW_RMA_OP_READ = 1, /**< copy from the peer's exposure into `local` */
    TW_RMA_OP_WRITE = 2 /**< copy from `local` into the peer's exposure */
};

/** The largest descriptor any transport writes, in bytes.  Since ABI 1.3. */
#define TW_RMA_DESC_MAX 64

/** Completion of an rma_post() or rma_revoke(): `status` is 0 or a negative
 *  code (-TW_EREMOTEACCESS, the connection's error, ...); details in
 *  last_error.  Runs on the connection's loop.  Since ABI 1.3. */
typedef void (*tw_rma_cb)(void *arg, int status);

/** One read or write (rma_post).  The caller sets `size` to its sizeof; the
 *  transport refuses (-EINVAL) a size below TW_RMA_REQUEST_SIZE_V1 and reads
 *  members past it only behind TW_HAS_MEMBER.  The transport copies what it
 *  needs: the struct and the descriptor may be freed when rma_post returns,
 *  `local` must stay valid until the callback.  Since ABI 1.3 (all of it). */
struct tw_rma_request {
    uint32_t size;     /**< sizeof(struct tw_rma_request) in the caller's build */
    uint32_t op;       /**< TW_RMA_OP_READ or TW_RMA_OP_WRITE */
    const void *desc;  /**< the peer's descriptor, as rma_expose wrote it */
    uint32_t desc_len; /**< its length */
    uint32_t flags;    /**< reserved, 0 */
    uint64_t offset;   /**< where in the exposure */
    void *local;       /**< read: destination; write: source (any memory; memory from rma_mem_get avoids a copy or a
                          registration) */
    size_t len;        /**< bytes; 0 is -EINVAL */
    tw_rma_cb cb;      /**< required */
    void *arg;         /**< passed to cb */
};

/** The smallest tw_rma_request a transport accepts: the layout ABI 1.3 gave it. */
#define TW_RMA_REQUEST_SIZE_V1 TW_SIZE_THROUGH(struct tw_rma_request, arg)

/** What a transport puts in tw_conn_stats.version: its TW_ABI_MINOR. */
#define TW_CONN_STATS_VERSION TW_ABI_MINOR

/** Per-connection counters; every field counts from the connection's start.
 *  The transport fills only the members that fit in the caller's `size`.
 *  Members marked "if any" belong to a mechanism only some transports have
 *  (credits, completion queues, a registered pool, control messages): a
 *  transport without it leaves them 0 (docs/writing-a-plugin.md, section 8). */
struct tw_conn_stats {
    uint32_t size;              /**< set by the caller: sizeof(struct tw_conn_stats) */
    uint32_t version;           /**< set by the transport: its TW_ABI_MINOR */
    uint64_t bytes_sent;        /**< payload bytes handed to the wire */
    uint64_t bytes_received;    /**< payload bytes taken off the wire */
    uint64_t messages_sent;     /**< transport units sent (TCP: send calls; RDMA: data work requests) */
    uint64_t messages_received; /**< transport units received (TCP: recv calls; RDMA: data completions) */
    uint64_t write_would_block; /**< writes that were short or returned -EAGAIN */
    uint64_t credit_stalls;     /**< if any: times the sender waited for the peer's credits */
    uint64_t rnr_retries;       /**< if any: receiver-not-ready events seen (should stay 0) */
    uint64_t cq_events;         /**< if any: completion-channel events that woke this connection */
    uint64_t pool_exhausted;    /**< if any: times the registered pool had no buffer for it */
    uint64_t zero_copy_sends;   /**< send_buf_submit calls */
    uint64_t zero_copy_recvs;   /**< recv_buf_borrow calls that lent a buffer */
    uint64_t control_sent;      /**< if any: protocol control messages sent (credits, keepalives) */
    uint64_t control_received;  /**< if any: protocol control messages received */
};

/** What a transport puts in tw_transport_stats.version: its TW_ABI_MINOR. */
#define TW_TRANSPORT_STATS_VERSION TW_ABI_MINOR

/** Per-transport counters (all loops together); "if any" as in tw_conn_stats. */
struct tw_transport_stats {
    uint32_t size;                  /**< set by the caller */
    uint32_t version;               /**< set by the transport: its TW_ABI_MINOR */
    uint64_t connections_open;      /**< connections currently allocated, handshaking included */
    uint64_t connections_accepted;  /**< handshakes completed by accept */
    uint64_t connections_connected; /**< handshakes completed by connect */
    uint64_t handshakes_aborted;    /**< incoming requests dropped before TW_EV_CONNECTED (stale, rejected) */
    uint64_t registered_bytes;      /**< if any: memory registered with the device */
    uint64_t registered_in_use;     /**< if any: of which currently lent to connections */
    uint64_t pool_exhausted;        /**< if any: allocations refused because the pool was full */
    uint64_t quarantined_bytes;     /**< if any: memory held back because a dead peer might still write it */
};

/**
 * Shared operations for ctrl(), called with `ns` NULL.  Each states what
 * `data` points to; `len` is the size of that object (sizeof(int) for an
 * int), and a transport refuses (-EINVAL) a `len` too small for the op.
 *
 * A transport's private operations live in its own namespace: the caller
 * passes the transport's name as `ns` (e.g. "rdma") and an op number of the
 * transport's choosing.  A transport answers a private op only when `ns` is
 * its own name, and returns -EOPNOTSUPP otherwise, so two transports' private
 * op numbers can never be mistaken for one another.  Shared op numbers are
 * given out here only; -EOPNOTSUPP for unknown ones in either namespace.
 */
enum tw_ctrl_op {
    TW_CTRL_GET_FD = 1,              /**< data: int *; the socket fd, or -ENOTSUP */
    TW_CTRL_SET_NODELAY = 2,         /**< data: const int *; disable Nagle-style batching */
    TW_CTRL_GET_TRANSPORT_STATS = 3, /**< conn may be NULL; data: struct tw_transport_stats * (its size set) */
    /** Read the credentials (certificate, key, CA) again from the files the
     *  configuration names.  conn NULL; data: char[len] for a one-line
     *  reason.  Called from any thread while loops run.  Connections already
     *  open keep what they have; handshakes that start after a 0 return use
     *  the new files.  On failure nothing changes: the old credentials stay
     *  and the reason (the key, the file, the library's words) is written to
     *  data.  -EOPNOTSUPP from a transport with no credentials.  A stacked
     *  transport also passes it to its inner transport.  Since ABI 1.4. */
    TW_CTRL_RELOAD_CREDENTIALS = 4
};

/** What a plugin puts in tw_transport_ops.version: its TW_ABI_MINOR. */
#define TW_TRANSPORT_OPS_VERSION TW_ABI_MINOR

/**
 * The transport vtable.  Members marked [required] must be set or the host
 * rejects the plugin, naming the member.  The host replaces a missing
 * optional member with a stub that returns -EOPNOTSUPP (or does nothing), so
 * its own call sites never test for NULL.
 */
struct tw_transport_ops {
    uint32_t size;           /**< sizeof(struct tw_transport_ops) in the plugin's build */
    uint32_t version;        /**< TW_TRANSPORT_OPS_VERSION in the plugin's build */
    const char *name;        /**< "tcp", "rdma": also the prefix of its config keys [required] */
    const char *description; /**< one line for logs and twinwire-info */
    uint64_t caps;           /**< TW_CAP_* */

    /* --- process lifecycle --------------------------------------------- */

    /**
     * [required] Create the transport.  Open devices, check limits, read
     * config with host->config_get.  On refusal return a negative code and
     * write a one-line reason (which device, which limit, the number and the
     * fix) into `why` (NUL-terminated, at most why_len bytes); the host logs
     * it and, in `auto` mode, falls back to TCP.
     * `host` stays valid until fini returns.
     */
    int (*init)(const struct tw_host *host, tw_transport **out, char *why, size_t why_len);
    /** [required] Free everything; every loop has been detached before. */
    void (*fini)(tw_transport *transport);
    /**
     * Describe the host's devices without init (twinwire-info): write
     * "key: value" lines into buf.  Returns the length it needed (like
     * snprintf) or a negative code.
     */
    int (*probe)(const struct tw_host *host, char *buf, size_t len);
    /** Describe the initialised transport (devices in use, pool sizes) like probe. */
    int (*describe)(tw_transport *transport, char *buf, size_t len);

    /* --- per event loop ------------------------------------------------ */

    /** [required] Called on `loop`'s thread before any other use of it. */
    int (*loop_attach)(tw_transport *transport, tw_loop *loop, tw_transport_loop **out);
    /** [required] Called on the loop's thread after every listener and
     *  connection of the loop has been closed. */
    void (*loop_detach)(tw_transport_loop *tloop);
    /** Non-zero when connections of this loop hold events no fd will
     *  announce (received data, writability, an error). */
    int (*has_pending_data)(tw_transport_loop *tloop);
    /** Deliver those events through the connections' callbacks.  Returns
     *  the number of connections it called back, or a negative code. */
    int (*process_pending_data)(tw_transport_loop *tloop);

    /* --- listeners ------------------------------------------------------- */

    /** [required] Bind and listen on `tloop`.  Returns 0 and *out, or a
     *  negative code: -EINVAL (no address, one too short for its family,
     *  no on_incoming, params->size below TW_LISTEN_PARAMS_SIZE_V1), -EADDRINUSE,
     *  -EADDRNOTAVAIL, -EAFNOSUPPORT, -TW_ENODEVICE, ... */
    int (*listen)(tw_transport_loop *tloop, const struct tw_listen_params *params, tw_listener **out);
    /**
     * [required] Take one waiting connection and give it to `target` (which
     * may be the listener's own loop).  Runs on the listener's thread.
     * Returns 0 and *out, or -EAGAIN when none waits.  The host then hands
     * *out to `target`'s thread and calls set_callback there; from then on
     * only that thread touches it.  The transport finishes its handshake on
     * `target` (post to it with host->run_in_loop: tasks run in order, so
     * yours run before the host's set_callback) and reports TW_EV_CONNECTED,
     * or TW_EV_ERROR if the peer went away meanwhile.
     */
    int (*accept)(tw_listener *listener, tw_transport_loop *target, tw_conn **out);
    /** The bound address (useful after binding port 0). */
    int (*listener_addr)(tw_listener *listener, struct sockaddr *addr, uint32_t *addrlen);
    /** [required] Stop listening, refuse what still waits, free. */
    void (*listener_close)(tw_listener *listener);

    /* --- connections ----------------------------------------------------- */

    /**
     * [required] Start connecting; the result arrives as TW_EV_CONNECTED or
     * TW_EV_ERROR (-ECONNREFUSED when nothing listens, -ETIMEDOUT after
     * timeout_ms, -EHOSTUNREACH, -TW_EPEERPROTO, ...), from the loop even
     * when it is known at once.  Returns 0 and *out, or a negative code when
     * it cannot even start: -EINVAL for no address, an addrlen too short for
     * its family or params->size below TW_CONNECT_PARAMS_SIZE_V1, -EAFNOSUPPORT, ...
     */
    int (*connect)(tw_transport_loop *tloop, const struct tw_connect_params *params, tw_conn **out);
    /** [required] Set the one callback.  Call it before returning to the loop. */
    int (*set_callback)(tw_conn *conn, tw_conn_cb cb, void *arg);
    /** [required] Choose which of TW_EV_READ / TW_EV_WRITE to be told about
     *  (TW_EV_CONNECTED and TW_EV_ERROR are always reported).  Initially
     *  TW_EV_READ. */
    int (*set_events)(tw_conn *conn, uint32_t events);
    /** [required] Like read(2): bytes read, 0 at end-of-stream, -EAGAIN when
     *  nothing is there yet, or the connection's error. */
    ssize_t (*read)(tw_conn *conn, void *buf, size_t len);
    /** [required] Like readv(2). */
    ssize_t (*readv)(tw_conn *conn, const struct iovec *iov, int iovcnt);
    /**
     * [required] Like write(2): returns the number of bytes accepted, which
     * may be fewer than `len` (a short write), or -EAGAIN when none could be
     * accepted (ask for TW_EV_WRITE).  Accepted bytes are the transport's
     * to deliver, in order, unless the connection fails.
     */
    ssize_t (*write)(tw_conn *conn, const void *buf, size_t len);
    /** [required] Like writev(2); short writes as for write. */
    ssize_t (*writev)(tw_conn *conn, const struct iovec *iov, int iovcnt);
    /** Like shutdown(2) with SHUT_WR (end-of-stream to the peer after the
     *  accepted bytes), SHUT_RD or SHUT_RDWR; write then returns -EPIPE.
     *  Required by TW_CAP_HALF_CLOSE; without it leave this NULL (the host's
     *  stub refuses with -EOPNOTSUPP): never pretend. */
    int (*shutdown)(tw_conn *conn, int how);
    /**
     * [required] Close and free.  Bytes already accepted are still sent when
     * the connection is healthy (the transport may linger for a bounded time
     * after close returns).  No callback runs after close returns.
     */
    void (*close)(tw_conn *conn);
    /** [required] The error reported with TW_EV_ERROR (negative), or 0. */
    int (*get_error)(tw_conn *conn);
    /** [required] One line on the last failure: the call, errno or
     *  work-completion status, and a hint.  Never NULL ("" when none). */
    const char *(*last_error)(tw_conn *conn);
    /** The local address. */
    int (*local_addr)(tw_conn *conn, struct sockaddr *addr, uint32_t *addrlen);
    /** The peer's address. */
    int (*peer_addr)(tw_conn *conn, struct sockaddr *addr, uint32_t *addrlen);
    /** Fill the counters (out->size set by the caller). */
    int (*get_stats)(tw_conn *conn, struct tw_conn_stats *out);
    /** Text for a TW_E* code of this transport; NULL: the host uses
     *  tw_strerror or strerror. */
    const char *(*strerror)(int err);

    /* --- zero-copy buffers ------------------------------------------------ */

    /**
     * Lend a send buffer of at least `min_len` bytes (0: any size) from the
     * transport's memory (registered memory for RDMA).  Fill it, set
     * buf->len, and hand it back with send_buf_submit.  One buffer may be
     * out at a time per connection (a second get: a negative code, -EBUSY).
     * -EAGAIN: none free now (ask for TW_EV_WRITE); -EMSGSIZE: min_len is
     * larger than any buffer can be.
     */
    int (*send_buf_get)(tw_conn *conn, size_t min_len, struct tw_buf *out);
    /** Send buf->len bytes of a buffer from send_buf_get, in stream order
     *  after everything written before (len 0 just returns it). */
    int (*send_buf_submit)(tw_conn *conn, struct tw_buf *buf);
    /**
     * Lend the next received bytes in place.  Returns 0 with out->len > 0,
     * -EAGAIN when none, 0 with out->len == 0 at end-of-stream, or the error.
     * One buffer may be out at a time; read is refused (-EBUSY) meanwhile.
     */
    int (*recv_buf_borrow)(tw_conn *conn, struct tw_buf *out);
    /** Give a borrowed buffer back; the first `consumed` bytes are gone, the
     *  rest will be read again.  -EINVAL for a buffer that was not lent or
     *  `consumed` larger than it, and nothing changes. */
    int (*recv_buf_return)(tw_conn *conn, struct tw_buf *buf, size_t consumed);

    /* --- escape hatch ------------------------------------------------------ */

    /** Rarely used operations: `ns` NULL and a shared TW_CTRL_* op, or `ns`
     *  the transport's own name and one of its private ops (see tw_ctrl_op).
     *  `data` points to `len` bytes.  -EOPNOTSUPP for unknown ops and other
     *  namespaces.  `conn` may be NULL for transport-wide operations, then
     *  `transport` is used. */
    int (*ctrl)(tw_transport *transport, tw_conn *conn, const char *ns, uint32_t op, void *data, size_t len);

    /* --- configuration ----------------------------------------------------- */

    /**
     * Validate this transport's configuration without init: look up every
     * key under "<name>." with host->config_get and check its value, without
     * opening devices, allocating pools or needing any library beyond libc,
     * so that a mistake is found on every host and in every mode (also when
     * this transport is not selected).  Returns 0, or -TW_ECONFIG with a
     * one-line reason in `why` (key, value, origin, what was expected).  As
     * with init, keys under the prefix that were never looked up are
     * reported by the host as unknown.  Optional: when absent the host can
     * check this transport's keys only at init.
     */
    int (*check_config)(const struct tw_host *host, char *why, size_t why_len);

    /* --- end of the ABI 1.0 table (TW_TRANSPORT_OPS_SIZE_V1) --------------- */

    /* --- one-sided remote memory (ABI 1.3; see "One-sided remote memory") -- */

    /**
     * Expose [addr, addr + len) to this connection's peer for `access`
     * (TW_RMA_READ, TW_RMA_WRITE or both).  Writes the descriptor into
     * `desc` (room for TW_RMA_DESC_MAX bytes) and its length into *desc_len.
     * The memory must stay valid until the revocation's callback (or close).
     * Returns 0 and *out, or -EINVAL (len 0, access 0 or unknown bits),
     * -ENOTCONN (before TW_EV_CONNECTED or after the connection failed),
     * -ENOMEM / -TW_EMEMLOCK (the memory cannot be registered; last_error
     * says which call and why).  Required by TW_CAP_RMA.  Since ABI 1.3.
     */
    int (*rma_expose)(tw_conn *conn, void *addr, size_t len, uint32_t access, tw_rma_exposure **out, void *desc,
                      size_t *desc_len);
    /** Withdraw an exposure (rule 3): `cb` runs once the memory is the
     *  application's again; the exposure is freed after it.  -EINVAL for an
     *  exposure revoked before.  Required by TW_CAP_RMA.  Since ABI 1.3. */
    int (*rma_revoke)(tw_rma_exposure *exposure, tw_rma_cb cb, void *arg);
    /** Start a read or write of the peer's exposure (see tw_rma_request).
     *  Returns 0 (the callback will run), -EINVAL (bad request, offset + len
     *  past what the descriptor says, a descriptor this transport did not
     *  write), -ENOTCONN, or -EAGAIN (too many operations in flight; ask for
     *  TW_EV_WRITE).  Required by TW_CAP_RMA.  Since ABI 1.3. */
    int (*rma_post)(tw_conn *conn, const struct tw_rma_request *req);
    /** Lend `len` bytes of memory the transport can expose and use as
     *  `local` without a registration or a copy (RDMA: registered memory);
     *  give it back with rma_mem_put.  -ENOMEM when none.  Optional.
     *  Since ABI 1.3. */
    int (*rma_mem_get)(tw_conn *conn, size_t len, struct tw_buf *out);
    /** Give back memory from rma_mem_get; it must no longer be exposed.
     *  Since ABI 1.3. */
    int (*rma_mem_put)(tw_conn *conn, struct tw_buf *buf);
};

/** Size of the ABI 1.0 vtable: the host refuses a smaller one, naming both
 *  sizes, and treats members past a plugin's size as absent. */
#define TW_TRANSPORT_OPS_SIZE_V1 TW_SIZE_THROUGH(struct tw_transport_ops, check_config)

/** What a plugin puts in tw_plugin_info.version: its TW_ABI_MINOR. */
#define TW_PLUGIN_INFO_VERSION TW_ABI_MINOR

/** What a plugin's entry point returns.  Static data: never freed. */
struct tw_plugin_info {
    uint32_t size;                      /**< sizeof(struct tw_plugin_info) */
    uint32_t version;                   /**< TW_PLUGIN_INFO_VERSION */
    uint32_t abi_major;                 /**< TW_ABI_MAJOR the plugin was built with */
    uint32_t abi_minor;                 /**< TW_ABI_MINOR the plugin was built with */
    const char *name;                   /**< "rdma" */
    const char *plugin_version;         /**< the plugin's own version, for logs */
    const struct tw_transport_ops *ops; /**< the vtable */
};

/** Size of the ABI 1.0 plugin info: the host refuses a smaller one. */
#define TW_PLUGIN_INFO_SIZE_V1 TW_SIZE_THROUGH(struct tw_plugin_info, ops)

/**
 * The plugin entry point, the ONLY symbol a plugin exports.  It must not
 * open devices or allocate: it returns static data describing the plugin.
 * The host passes its own ABI version so a plugin can refuse (return NULL)
 * a host it knows it cannot serve.
 */
typedef const struct tw_plugin_info *(*tw_plugin_entry_fn)(uint32_t host_abi_major, uint32_t host_abi_minor);

/** Defined by each plugin (with TW_EXPORT); declared here for its prototype. */
const struct tw_plugin_info *TW_PLUGIN_ENTRY(uint32_t host_abi_major, uint32_t host_abi_minor);

TW_END_DECLS

/* Every includer compiles the layout checks of the structs above. */
#include <twinwire/abi_layout.h>

#endif /* TWINWIRE_TRANSPORT_H */
