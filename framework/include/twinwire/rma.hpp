// SPDX-License-Identifier: MIT
// One-sided remote memory on a connection (docs/rma.md): expose a buffer to
// the connection's peer, read or write the peer's exposures, revoke.
#pragma once

#include <twinwire/export.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

namespace twinwire {

class Connection;
class Loop;

/// What the peer may do with an exposure.
enum class RmaAccess : uint32_t {
    read = 1,       ///< TW_RMA_READ: the peer may read it
    write = 2,      ///< TW_RMA_WRITE: the peer may write it
    read_write = 3, ///< both
};

/// The outcome of rma_read / rma_write: an empty code when every byte moved,
/// else errc::remote_access_refused (bounds, mode, revoked, not this
/// connection's), the connection's error, ...; `reason` says which in one line.
using RmaCallback = std::function<void(std::error_code status, const std::string &reason)>;

/**
 * Memory exposed to one connection's peer (Connection::expose).  Send
 * descriptor() to the peer in your own protocol; it reads or writes the
 * memory with it on the same connection, and nowhere else.
 *
 * The memory must stay valid and is the peer's to access until the
 * revocation is done: revoke()'s callback ran, or the connection closed.
 * Dropping the last reference revokes too.  Use it on the connection's loop.
 */
class TW_API RmaExposure {
public:
    ~RmaExposure();
    RmaExposure(const RmaExposure &) = delete;
    RmaExposure &operator=(const RmaExposure &) = delete;

    /// The bytes to hand the peer (at most 64).
    const std::string &descriptor() const;
    void *data() const;
    size_t size() const;
    RmaAccess access() const;
    /// Not revoked, and its connection still open.
    bool active() const;
    /// Withdraw it: from this call on no new access succeeds; `done` runs on
    /// the connection's loop (never inside this call) once the accesses in
    /// flight were completed or cut off: the memory is the application's
    /// again.  False (nothing done) when it was revoked before.
    bool revoke(std::function<void()> done = {});

private:
    friend class Connection;
    /// Its connection, id, memory and descriptor (framework/src/rma_handles.hpp).
    struct Impl;
    explicit RmaExposure(std::unique_ptr<Impl> impl);

    std::unique_ptr<Impl> impl_;
};

using RmaExposurePtr = std::shared_ptr<RmaExposure>;

/**
 * Memory for RMA that the transport lends (Connection::rma_memory): over
 * RDMA it is registered once when lent, so exposing it needs no
 * registration and using it as `local` needs no staging copy.  Where the
 * transport lends none it is ordinary heap memory.  Valid until the last
 * reference goes or the connection ends, whichever comes first; drop it
 * only once no exposure and no transfer uses it.  Use it on the
 * connection's loop.
 */
class TW_API RmaMemory {
public:
    ~RmaMemory();
    RmaMemory(const RmaMemory &) = delete;
    RmaMemory &operator=(const RmaMemory &) = delete;
    char *data() const;
    size_t size() const;
    /// The transport lent it (false: heap memory).
    bool lent() const;

private:
    friend class Connection;
    /// Its connection, memory and the transport's token (framework/src/rma_handles.hpp).
    struct Impl;
    explicit RmaMemory(std::unique_ptr<Impl> impl);

    std::unique_ptr<Impl> impl_;
};

using RmaMemoryPtr = std::shared_ptr<RmaMemory>;

} // namespace twinwire
