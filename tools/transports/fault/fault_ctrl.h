/* SPDX-License-Identifier: MIT */
/* The fault transport's private ctrl operations (namespace "fault"), for
 * tests that read what was injected.  C99, like every plugin_api header. */
#ifndef TWINWIRE_FAULT_CTRL_H
#define TWINWIRE_FAULT_CTRL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ctrl(transport, conn, "fault", op, data, len). */
enum tw_fault_ctrl_op {
    /** data: struct tw_fault_counts * (its size set); conn NULL: the
     *  transport's totals over every connection so far. */
    TW_FAULT_CTRL_COUNTS = 1,
    /** data: char buffer of len bytes; the connection's fault log (one
     *  line per fault, NUL-terminated, cut to fit).  Returns the length
     *  the whole log needs, like snprintf. */
    TW_FAULT_CTRL_LOG = 2,
    /** data: uint64_t *; the connection's ordinal (1, 2, ... in order of
     *  creation), which with fault.seed decides its faults. */
    TW_FAULT_CTRL_ORDINAL = 3
};

/** Faults injected (per connection, or totals).  Filled up to `size`. */
struct tw_fault_counts {
    uint32_t size;               /**< set by the caller: sizeof(struct tw_fault_counts) */
    uint32_t version;            /**< 1 */
    uint64_t connections;        /**< connections wrapped (totals only) */
    uint64_t targeted;           /**< of which fault.target selected (totals only) */
    uint64_t short_writes;       /**< writes cut to fault.max_write */
    uint64_t short_reads;        /**< reads cut to fault.max_read */
    uint64_t eagain_bursts;      /**< -EAGAIN bursts started */
    uint64_t eagain_returns;     /**< writes refused with -EAGAIN by a burst */
    uint64_t delayed_chunks;     /**< chunks held back by latency or a bandwidth cap */
    uint64_t stalls;             /**< stalls (nothing delivered for fault.stall_ms) */
    uint64_t connects_refused;   /**< connects failed with -ECONNREFUSED */
    uint64_t connects_timed_out; /**< connects failed with -ETIMEDOUT */
    uint64_t connects_reset;     /**< connects that came up, then were reset */
    uint64_t resets;             /**< connections reset (after N bytes, by probability) */
};

#ifdef __cplusplus
}
#endif

#endif
