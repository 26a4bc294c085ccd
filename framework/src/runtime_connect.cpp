// SPDX-License-Identifier: MIT
// Client connections, with per-connection fallback from RDMA to TCP.
#include "connection_access.hpp"
#include "runtime_impl.hpp"
#include "sockaddr_text.hpp"

#include <twinwire/log.hpp>

#include <stdexcept>

namespace twinwire {

void Runtime::connect(const ConnectOptions &options, ConnectHandler on_done)
{
    if (!impl_->started) throw StartupError(errc::not_started, "Runtime::connect() before start()");
    if (!on_done) throw std::invalid_argument("Runtime::connect(): the handler is empty");
    Loop &loop = options.loop >= 0 ? *loops_.at(static_cast<size_t>(options.loop) % loops_.size())
                                   : impl_->next_loop(impl_->connect_round_robin);
    Impl *impl = impl_.get();
    // Always from the loop: on_done never runs inside connect().
    if (!loop.post([impl, &loop, options, on_done] { impl->start_connect(loop, options, on_done, 0, {}); }))
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

void Runtime::Impl::start_connect(Loop &loop, const ConnectOptions &options, ConnectHandler done, size_t step,
                                  std::string fallback_reason)
{
    const Config &config = rt->config_;
    const std::string target = options.address + ":" + std::to_string(options.port);
    std::string why;
    const std::vector<Transport *> route = connect_route(rt->selection_, options, &why);
    if (route.empty()) {
        done(nullptr, ConnectError{errc::transport_not_loaded, "connect to " + target + ": " + why});
        return;
    }
    Transport &transport = *route[step];
    const bool last = step + 1 >= route.size();

    // A failed attempt is retried over the next transport, once each, with the reason kept.
    auto fail = [this, &loop, options, done, step, last, target, &transport](std::error_code code,
                                                                             const std::string &why) {
        if (!last) {
            std::string reason = transport.name() + " connect to " + target + " failed: " + why;
            TW_INFO("connect", "%s; trying the next transport for this connection", reason.c_str());
            start_connect(loop, options, done, step + 1, reason);
            return;
        }
        done(nullptr, ConnectError{code, "connect to " + target + " over " + transport.name() + ": " + why});
    };

    struct sockaddr_storage peer, source;
    socklen_t peer_len = 0, source_len = 0;
    std::string err = resolve_address(options.address, options.port, false, &peer, &peer_len);
    if (!err.empty()) {
        done(nullptr, ConnectError{errc::resolve_failed, "connect: " + err});
        return;
    }
    if (!options.source_address.empty()) {
        err = resolve_address(options.source_address, 0, false, &source, &source_len);
        if (!err.empty()) {
            done(nullptr, ConnectError{errc::resolve_failed, "connect: source address: " + err});
            return;
        }
    }
    tw_connect_params p{};
    p.size = sizeof p;
    p.timeout_ms = options.timeout_ms ? options.timeout_ms : config.connect_timeout_ms();
    p.addr = reinterpret_cast<const struct sockaddr *>(&peer);
    p.addrlen = peer_len;
    if (source_len) {
        p.source = reinterpret_cast<const struct sockaddr *>(&source);
        p.sourcelen = source_len;
    }
    tw_conn *conn = nullptr;
    int rc = transport.ops().connect(transport.tloop(loop), &p, &conn);
    if (rc < 0) {
        fail(code_from_transport(rc), "connect: " + transport.error_text(rc));
        return;
    }
    uint64_t id = next_id.fetch_add(1, std::memory_order_relaxed);
    auto c = ConnectionAccess::create(loop, transport, conn, id, config, "connect handler",
                                      [fail, done, fallback_reason](const ConnectionPtr &c, int err,
                                                                    const std::string &why) {
                                          if (err) {
                                              fail(code_from_transport(err), why);
                                              return;
                                          }
                                          ConnectionAccess::set_fallback_reason(*c, fallback_reason);
                                          done(c, ConnectError{});
                                      });
    if (!c) {
        fail(make_error_code(errc::transport_error), "set_callback failed");
        return;
    }
    track(loop, c);
}

} // namespace twinwire
