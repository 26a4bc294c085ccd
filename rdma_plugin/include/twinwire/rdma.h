/* SPDX-License-Identifier: MIT */
/*
 * The RDMA transport's private ctrl() operations (namespace "rdma").
 * A host asks with ops->ctrl(t, conn, TW_RDMA_CTRL_NS, op, data, len);
 * other transports answer -EOPNOTSUPP.
 */
#ifndef TWINWIRE_RDMA_H
#define TWINWIRE_RDMA_H

#include <stdint.h>

#define TW_RDMA_CTRL_NS "rdma"

enum tw_rdma_ctrl_op {
    /** conn required; data: struct tw_rdma_rings * (its size set: at least TW_RDMA_RINGS_SIZE_V1; the members that
     *  fit in it are filled). */
    TW_RDMA_CTRL_GET_RINGS = 1
};

/** One connection's rings now, and how often they changed size. */
struct tw_rdma_rings {
    uint32_t size;       /**< set by the caller: sizeof(struct tw_rdma_rings) */
    uint32_t reserved;   /**< 0 */
    uint64_t rx_ring;    /**< bytes of the receive ring the peer writes now */
    uint64_t tx_ring;    /**< bytes of the TX staging ring now */
    uint64_t registered; /**< registered bytes the connection holds (block and larger rings, old ones draining) */
    uint32_t rx_grows;   /**< receive ring moved to a larger one */
    uint32_t rx_shrinks; /**< receive ring moved back after rdma.ring_idle_ms */
    uint32_t tx_grows;   /**< TX ring moved to a larger one */
    uint32_t tx_shrinks; /**< TX ring moved back after rdma.ring_idle_ms */
    /* Appended later: a caller whose size ends before a member does not get it. */
    uint64_t window_waits; /**< times posting was held until this end's own remote operations completed, so that
                                window operations could go (docs/rdma-design.md section 3, "Window operations") */
};

/** The size of struct tw_rdma_rings before window_waits: the smallest accepted. */
#define TW_RDMA_RINGS_SIZE_V1 48

#endif
