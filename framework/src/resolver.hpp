// SPDX-License-Identifier: MIT
// Asynchronous name resolution for client connects: libevent's evdns on the
// connection's own loop (never a blocking getaddrinfo on a loop thread).
#pragma once

#include "sockaddr_text.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

struct evdns_base;

namespace twinwire {

class Loop;

/// One per loop, created, used and destroyed on that loop's thread.
class Resolver {
public:
    /// Every address of the name, in the resolver's order; or the error.
    using Done = std::function<void(std::vector<SocketAddress> addresses, const std::string &error)>;

    explicit Resolver(Loop &loop);
    ~Resolver(); ///< requests still waiting end with an error
    Resolver(const Resolver &) = delete;
    Resolver &operator=(const Resolver &) = delete;

    /// Literals ("unix:/path", numeric IPv4/IPv6) are answered at once,
    /// inside this call; names through evdns (/etc/hosts first, then the
    /// name servers of /etc/resolv.conf), later, on the loop.
    void resolve(const std::string &host, uint16_t port, Done done);

private:
    Loop &loop_;
    struct evdns_base *dns_ = nullptr;
};

} // namespace twinwire
