// SPDX-License-Identifier: MIT
// The rdma.* configuration keys, read once at init through host->config_get.
#pragma once

#include <twinwire/host.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace twrdma {

struct Settings {
    size_t ring_size = 4 * 1024; ///< rdma.ring_size: receive ring the peer writes into, at first (and when idle)
    size_t ring_max = 16u << 20; ///< rdma.ring_max: what it may grow to while the sender waits for it (0: ring_size)
    size_t send_buffer_size = 2 * 1024; ///< rdma.send_buffer_size: TX staging ring, at first (and when idle)
    size_t send_buffer_max =
        16u << 20; ///< rdma.send_buffer_max: what it may grow to while writes wait for it (0: send_buffer_size)
    uint32_t ring_idle_ms = 5000; ///< rdma.ring_idle_ms: idle time after which grown rings shrink back
    uint32_t recv_depth =
        16; ///< rdma.recv_depth: receives each connection reserves in the shared queue (its peer's credits)
    uint32_t control_credits = 4; ///< rdma.control_credits: receives kept for control messages
    uint32_t sq_depth = 64;       ///< rdma.sq_depth: send queue entries per connection
    size_t pool_size =
        2u << 20; ///< rdma.pool_size: registered per (loop, device) up front; first slab (later ones an eighth)
    size_t pool_max = 256u << 20;  ///< rdma.pool_max: growth limit per (loop, device)
    uint32_t qp_timeout = 14;      ///< rdma.qp_timeout: 4.096 us * 2^n local ACK timeout
    uint32_t retry_count = 7;      ///< rdma.retry_count: transport retries
    uint32_t rnr_retry = 3;        ///< rdma.rnr_retry: RNR retries (7 = infinite, refused)
    uint32_t keepalive_ms = 10000; ///< rdma.keepalive_ms: idle time before a KEEPALIVE
    uint32_t dead_peer_ms = 30000; ///< rdma.dead_peer_ms: silence before TW_EPEERDEAD
    uint32_t linger_ms = 5000;     ///< rdma.linger_ms: close flushes at most this long
    uint32_t busy_poll_us = 0;     ///< rdma.busy_poll_us: 0 = off
    std::string device;            ///< rdma.device: use only this device ("" = any)
    uint32_t port = 0;             ///< rdma.port: use only this port (0 = any)
    int gid_index = -1;            ///< rdma.gid_index: GID the device must have (RoCE v2), -1 = any
    size_t rma_max_transfer = 0;   ///< rdma.rma_max_transfer: bytes per RMA work request (0 = port's max_msg_sz)

    /// Bytes of registered memory one connection's block holds: its rings
    /// at first, and its control message buffers.
    size_t block_size() const;
    /// Bytes one connection holds while idle: its block and its share of
    /// the shared receive queue (srq.cpp).
    size_t idle_connection_bytes() const;
    /// Control message slots per connection.
    static constexpr uint32_t kCtrlSlots = 8;
};

/// Read every rdma.* key.  On a bad value return -TW_ECONFIG and put
/// "rdma.ring_size = 100k (twinwire.conf:3): must be a power of two" in *why.
int load_settings(const tw_host *host, Settings *out, std::string *why);

/// Parse "64k", "8M", "1G", "4096" (binary units).  False when malformed.
bool parse_size(const char *text, uint64_t *out);

} // namespace twrdma
