// SPDX-License-Identifier: MIT
// The state behind RmaExposure and RmaMemory (connection_rma.cpp), kept out
// of the installed header: none of it is libtwinwire's ABI, and none of it
// is exported (hidden, though the classes are TW_API).
#pragma once

#include <twinwire/rma.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace twinwire {

struct __attribute__((visibility("hidden"))) RmaExposure::Impl {
    std::weak_ptr<Connection> conn;
    Loop *loop;
    uint64_t id;
    void *data;
    size_t size;
    RmaAccess access;
    std::string descriptor;
    bool revoked = false;

    static RmaExposurePtr make(std::weak_ptr<Connection> conn, Loop *loop, uint64_t id, void *data, size_t size,
                               RmaAccess access, std::string descriptor)
    {
        // make_shared needs a public constructor; a class local to a member
        // of Impl may call the private one.  One allocation for the object
        // and its count, one for the state.
        struct Shared : RmaExposure {
            explicit Shared(std::unique_ptr<Impl> impl) : RmaExposure(std::move(impl)) {}
        };
        return std::make_shared<Shared>(
            std::unique_ptr<Impl>(new Impl{std::move(conn), loop, id, data, size, access, std::move(descriptor)}));
    }
};

struct __attribute__((visibility("hidden"))) RmaMemory::Impl {
    std::weak_ptr<Connection> conn;
    char *data;
    size_t size;
    bool lent; ///< by the transport (given back with rma_mem_put); else new[]
    uint64_t token;
    size_t cap;

    static RmaMemoryPtr make(std::weak_ptr<Connection> conn, char *data, size_t size, bool lent, uint64_t token,
                             size_t cap)
    {
        struct Shared : RmaMemory {
            explicit Shared(std::unique_ptr<Impl> impl) : RmaMemory(std::move(impl)) {}
        };
        return std::make_shared<Shared>(std::unique_ptr<Impl>(new Impl{std::move(conn), data, size, lent, token, cap}));
    }
};

} // namespace twinwire
