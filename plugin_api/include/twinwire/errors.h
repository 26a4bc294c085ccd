/* SPDX-License-Identifier: MIT */
/**
 * @file twinwire/errors.h
 * The one error model of the twinwire ABI.
 *
 * Every operation that can fail returns 0 (or a non-negative count) on
 * success and a NEGATIVE error code on failure: either a negated errno value
 * (-EAGAIN, -ECONNRESET, ...) or a negated TW_E* code below for failures that
 * errno cannot name.  Nothing sets the global errno as its way of reporting.
 *
 * -EAGAIN is flow control, not failure: the operation cannot make progress
 * now; ask for the matching event (TW_EV_READ / TW_EV_WRITE) and try again
 * when it arrives.
 *
 * Human-readable detail (which verb failed, the work-completion status, a
 * hint) is available per connection through tw_transport_ops.last_error;
 * tw_transport_ops.strerror turns a transport's own TW_E* codes into text,
 * and tw_strerror() below covers the codes every transport shares.
 */
#ifndef TWINWIRE_ERRORS_H
#define TWINWIRE_ERRORS_H

#include <twinwire/abi.h>

TW_BEGIN_DECLS

/** Codes beyond errno, returned negated.  Values are part of the ABI. */
enum tw_error {
    TW_EBASE = 10000,
    /** The object was created before fork(); the child may not use it. */
    TW_EFORKED = 10001,
    /** The plugin and the host disagree on the ABI (version or table size). */
    TW_EABI = 10002,
    /** No usable RDMA (or other) device on this host. */
    TW_ENODEVICE = 10003,
    /** The device exists but none of its ports is ACTIVE. */
    TW_EPORTDOWN = 10004,
    /** RLIMIT_MEMLOCK is too low to register the memory the transport needs. */
    TW_EMEMLOCK = 10005,
    /** The peer does not speak this transport (no listener, wrong protocol). */
    TW_EPEERPROTO = 10006,
    /** A work request completed with an error status (see last_error). */
    TW_EWC = 10007,
    /** The peer stopped answering keepalives within the configured time. */
    TW_EPEERDEAD = 10008,
    /** A malformed frame or control message arrived from the peer. */
    TW_EBADFRAME = 10009,
    /** A configuration value is invalid (the log says which key and why). */
    TW_ECONFIG = 10010,
    /** The peer refused a one-sided access: out of the exposure's bounds, a
     *  mode it was not exposed for, revoked, or not this connection's (see
     *  last_error).  Since ABI 1.3. */
    TW_EREMOTEACCESS = 10011,
    TW_ELAST = 10012
};

/**
 * Text for the shared TW_E* codes (and a generic text for anything else).
 * Hosts print errno values with strerror(-err) and plugin-specific codes with
 * the plugin's own strerror operation.
 */
static inline const char *tw_strerror(int err)
{
    switch (err < 0 ? -err : err) {
    case TW_EFORKED:
        return "object used in a child after fork(); initialise twinwire after daemonising";
    case TW_EABI:
        return "plugin ABI mismatch";
    case TW_ENODEVICE:
        return "no usable device";
    case TW_EPORTDOWN:
        return "no active port";
    case TW_EMEMLOCK:
        return "RLIMIT_MEMLOCK too low";
    case TW_EPEERPROTO:
        return "peer does not speak this transport";
    case TW_EWC:
        return "work request completed with an error";
    case TW_EPEERDEAD:
        return "peer stopped answering keepalives";
    case TW_EBADFRAME:
        return "malformed frame from peer";
    case TW_ECONFIG:
        return "invalid configuration";
    case TW_EREMOTEACCESS:
        return "remote memory access refused (bounds, mode, revoked or another connection's)";
    default:
        return "unknown twinwire error";
    }
}

TW_END_DECLS

#endif /* TWINWIRE_ERRORS_H */
