// SPDX-License-Identifier: MIT
// Client connections: the name resolved on the connection's loop (evdns),
// then every address it has, in order, over each transport of the route;
// a transport whose every address failed hands over to the next one
// (per-connection fallback from RDMA to TCP) with the reason kept.
#include "connection_access.hpp"
#include "resolver.hpp"
#include "runtime_impl.hpp"
#include "sockaddr_text.hpp"

#include <twinwire/log.hpp>

#include <stdexcept>

namespace twinwire {

void Runtime::connect(const ConnectOptions &options, ConnectHandler on_done)
{
    if (!impl_->started) throw StartupError(errc::not_started, "Runtime::connect() before start()");
    if (!on_done) throw std::invalid_argument("Runtime::connect(): the handler is empty");
    Loop &loop = options.loop >= 0 ? *impl_->loops.at(static_cast<size_t>(options.loop) % impl_->loops.size())
                                   : impl_->next_loop(impl_->connect_round_robin);
    Impl *impl = impl_.get();
    // Always from the loop: on_done never runs inside connect().
    if (!loop.post([impl, &loop, options, on_done] { impl->start_connect(loop, options, on_done); }))
        throw StartupError(errc::runtime_stopping, "Runtime::connect(): the runtime is stopping");
}

// The transports a connect tries, in order: the one asked for, or those in use.
static std::vector<Transport *> connect_route(const TransportSelection &sel, const ConnectOptions &options,
                                              std::string *why)
{
    if (!options.transport) return sel.fallback ? sel.in_use : std::vector<Transport *>{sel.in_use[0]};
    if (Transport *t = sel.find(*options.transport)) return {t};
    std::string loaded = sel.tcp->name();
    for (const auto &p : sel.plugins) loaded += ", " + p->name();
    *why = "transport '" + *options.transport + "' is not loaded (loaded: " + loaded + ")";
    return {};
}

/// One connect in progress: where it is in the route and the address list.
struct ConnectAttempt {
    Loop &loop;
    ConnectOptions options;
    ConnectHandler done;
    std::string target; ///< "host:port" as asked
    std::vector<Transport *> route;
    std::vector<SocketAddress> peers;
    SocketAddress source;
    size_t step = 0;                  ///< the transport being tried
    size_t address = 0;               ///< the address being tried
    std::string failures = {};        ///< of the current transport's addresses
    std::error_code last_code = {};   ///< of the latest failure
    std::string fallback_reason = {}; ///< why the transports before it failed
};

Resolver &Runtime::Impl::resolver(Loop &loop)
{
    auto &r = states[loop.index()]->resolver;
    if (!r) r = std::make_unique<Resolver>(loop);
    return *r;
}

void Runtime::Impl::start_connect(Loop &loop, const ConnectOptions &options, ConnectHandler done)
{
    auto a = std::make_shared<ConnectAttempt>(ConnectAttempt{loop, options, std::move(done), {}, {}, {}, {}});
    a->target = options.address + ":" + std::to_string(options.port);
    std::string why;
    a->route = connect_route(selection, options, &why);
    if (a->route.empty()) {
        a->done(nullptr, ConnectError{errc::transport_not_loaded, "connect to " + a->target + ": " + why});
        return;
    }
    auto with_peers = [this, a](std::vector<SocketAddress> peers, const std::string &err) {
        if (!err.empty()) {
            a->done(nullptr, ConnectError{errc::resolve_failed, "connect: " + err});
            return;
        }
        a->peers = std::move(peers);
        try_connect(a);
    };
    if (options.source_address.empty()) {
        resolver(loop).resolve(options.address, options.port, with_peers);
        return;
    }
    resolver(loop).resolve(
        options.source_address, 0, [this, a, with_peers](std::vector<SocketAddress> sources, const std::string &err) {
            if (!err.empty()) {
                a->done(nullptr, ConnectError{errc::resolve_failed, "connect: source address: " + err});
                return;
            }
            a->source = sources.front();
            resolver(a->loop).resolve(a->options.address, a->options.port, with_peers);
        });
}

void Runtime::Impl::connect_failed(const std::shared_ptr<ConnectAttempt> &a, std::error_code code,
                                   const std::string &why)
{
    a->last_code = code;
    std::string entry = a->peers.size() > 1 ? sockaddr_text(a->peers[a->address].sa()) + ": " + why : why;
    a->failures += (a->failures.empty() ? "" : "; ") + entry;
    ++a->address;
    try_connect(a);
}

void Runtime::Impl::try_connect(const std::shared_ptr<ConnectAttempt> &a)
{
    Transport &transport = *a->route[a->step];
    if (a->address >= a->peers.size()) {
        // Every address failed over this transport: the next one, or the end.
        if (a->step + 1 < a->route.size()) {
            std::string reason = transport.name() + " connect to " + a->target + " failed: " + a->failures;
            TW_INFO("connect", "%s; trying the next transport for this connection", reason.c_str());
            a->fallback_reason = reason;
            a->failures.clear();
            a->address = 0;
            ++a->step;
            try_connect(a);
            return;
        }
        a->done(nullptr, ConnectError{a->last_code,
                                      "connect to " + a->target + " over " + transport.name() + ": " + a->failures});
        return;
    }
    const SocketAddress &peer = a->peers[a->address];
    if (a->source.len && a->source.ss.ss_family != peer.ss.ss_family) {
        connect_failed(a, make_error_code(errc::address_unavailable), "not the source address's family");
        return;
    }
    tw_connect_params p{};
    p.size = sizeof p;
    p.timeout_ms = a->options.timeout_ms ? a->options.timeout_ms : config.connect_timeout_ms();
    p.addr = peer.sa();
    p.addrlen = peer.len;
    if (a->source.len) {
        p.source = a->source.sa();
        p.sourcelen = a->source.len;
    }
    tw_conn *conn = nullptr;
    int rc = transport.ops().connect(transport.tloop(a->loop), &p, &conn);
    if (rc < 0) {
        connect_failed(a, code_from_transport(rc), "connect: " + transport.error_text(rc));
        return;
    }
    uint64_t id = next_id.fetch_add(1, std::memory_order_relaxed);
    auto c = ConnectionAccess::create(a->loop, transport, conn, id, config, "connect handler",
                                      [this, a](const ConnectionPtr &c, int err, const std::string &why) {
                                          if (err) {
                                              connect_failed(a, code_from_transport(err), why);
                                              return;
                                          }
                                          ConnectionAccess::set_fallback_reason(*c, a->fallback_reason);
                                          a->done(c, ConnectError{});
                                      });
    if (!c) {
        connect_failed(a, make_error_code(errc::transport_error), "set_callback failed");
        return;
    }
    track(a->loop, c);
}

} // namespace twinwire
