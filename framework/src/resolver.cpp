// SPDX-License-Identifier: MIT
#include "resolver.hpp"

#include <twinwire/log.hpp>
#include <twinwire/loop.hpp>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>

#include <cstring>
#include <mutex>

namespace twinwire {
namespace {

struct Request {
    std::string host;
    Resolver::Done done;
};

void on_resolved(int result, struct evutil_addrinfo *res, void *arg)
{
    std::unique_ptr<Request> req(static_cast<Request *>(arg));
    std::vector<SocketAddress> addresses;
    for (struct evutil_addrinfo *ai = res; ai; ai = ai->ai_next)
        add_address(&addresses, ai->ai_addr, static_cast<socklen_t>(ai->ai_addrlen));
    if (res) evutil_freeaddrinfo(res);
    if (result != 0) {
        req->done({}, "cannot resolve '" + req->host + "': " + evutil_gai_strerror(result));
        return;
    }
    if (addresses.empty()) {
        req->done({}, "cannot resolve '" + req->host + "': no address");
        return;
    }
    req->done(std::move(addresses), {});
}

// evdns's own messages ("nameserver ... has failed") go to our log, not
// straight to stderr; the request's outcome is reported by its caller.
void on_evdns_log(int severity, const char *msg)
{
    if (severity >= EVENT_LOG_WARN) TW_INFO("dns", "%s", msg);
    else TW_DEBUG("dns", "%s", msg);
}

} // namespace

Resolver::Resolver(Loop &loop) : loop_(loop)
{
    static std::once_flag once;
    std::call_once(once, [] { evdns_set_log_fn(on_evdns_log); });
}

Resolver::~Resolver()
{
    if (dns_) evdns_base_free(dns_, 1); // waiting requests end with EVUTIL_EAI_CANCEL
}

void Resolver::resolve(const std::string &host, uint16_t port, Done done)
{
    SocketAddress literal;
    std::string why;
    if (parse_literal_address(host, port, &literal, &why)) {
        done({literal}, {});
        return;
    }
    if (!why.empty() || host.empty() || host == "*") {
        done({}, why.empty() ? "cannot connect to '" + host + "': a peer address or name is needed" : why);
        return;
    }
    if (!dns_) {
        // /etc/resolv.conf and /etc/hosts; without a resolv.conf, evdns asks
        // 127.0.0.1.  Inactive, it holds no event on the loop.
        dns_ = evdns_base_new(loop_.base(), EVDNS_BASE_INITIALIZE_NAMESERVERS | EVDNS_BASE_DISABLE_WHEN_INACTIVE);
        if (!dns_ && (dns_ = evdns_base_new(loop_.base(), EVDNS_BASE_DISABLE_WHEN_INACTIVE)))
            evdns_base_load_hosts(dns_, nullptr);
        if (!dns_) {
            done({}, "cannot resolve '" + host + "': the resolver could not be created");
            return;
        }
    }
    struct evutil_addrinfo hints;
    std::memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    hints.ai_flags = EVUTIL_AI_NUMERICSERV;
    auto *req = new Request{host, std::move(done)};
    // May answer at once (hosts file), calling on_resolved inside.
    evdns_getaddrinfo(dns_, host.c_str(), std::to_string(port).c_str(), &hints, on_resolved, req);
}

} // namespace twinwire
