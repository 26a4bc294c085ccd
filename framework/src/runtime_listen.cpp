// SPDX-License-Identifier: MIT
// Listeners: one per transport in use, all on the same address and port.
#include "connection_access.hpp"
#include "runtime_impl.hpp"
#include "sockaddr_text.hpp"

#include <twinwire/log.hpp>

#include <netinet/in.h>

#include <stdexcept>

namespace twinwire {
namespace {

void set_port(struct sockaddr_storage *ss, uint16_t port)
{
    if (ss->ss_family == AF_INET) reinterpret_cast<struct sockaddr_in *>(ss)->sin_port = htons(port);
    else if (ss->ss_family == AF_INET6) reinterpret_cast<struct sockaddr_in6 *>(ss)->sin6_port = htons(port);
}

uint16_t get_port(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) return ntohs(reinterpret_cast<const struct sockaddr_in *>(ss)->sin_port);
    if (ss->ss_family == AF_INET6) return ntohs(reinterpret_cast<const struct sockaddr_in6 *>(ss)->sin6_port);
    return 0;
}

} // namespace

Listener::Listener(std::shared_ptr<ListenerImpl> impl) : impl_(std::move(impl)) {}

Listener::~Listener() { close(); }

uint16_t Listener::port() const { return impl_->port; }
const std::string &Listener::address() const { return impl_->address; }

std::vector<std::string> Listener::transports() const
{
    std::vector<std::string> names;
    for (const auto &ep : impl_->endpoints) names.push_back(ep->transport->name());
    return names;
}

void Listener::close()
{
    std::shared_ptr<ListenerImpl> impl = impl_;
    if (impl->closed) return;
    Loop &main = impl->rt->rt->loop(0);
    if (main.in_loop_thread() || impl->rt->torn_down) impl->close_now();
    else main.post([impl] { impl->close_now(); });
}

void ListenerImpl::close_now()
{
    if (closed) return;
    closed = true;
    for (auto &ep : endpoints) ep->transport->ops().listener_close(ep->listener);
    // The log said "listening": it says when that ends (a dropped Listener too).
    if (!endpoints.empty() && port != 0) TW_INFO("listen", "no longer listening on %s:%u", address.c_str(), port);
}

void Runtime::Impl::close_listeners()
{
    std::vector<std::shared_ptr<ListenerImpl>> open;
    {
        std::lock_guard<std::mutex> lock(listeners_mutex);
        for (auto &w : listeners)
            if (auto l = w.lock()) open.push_back(l);
        listeners.clear();
    }
    for (auto &l : open) l->close_now();
}

void ListenerImpl::on_incoming(tw_listener *listener, void *arg)
{
    Endpoint *ep = static_cast<Endpoint *>(arg);
    ListenerImpl *self = ep->owner;
    const tw_transport_ops &ops = ep->transport->ops();
    // Bounded per callback: the event is level-triggered, the rest comes next time.
    for (int i = 0; i < 64 && !self->closed; ++i) {
        Loop &target = self->rt->next_loop(self->rt->accept_round_robin);
        tw_conn *conn = nullptr;
        int rc = ops.accept(listener, ep->transport->tloop(target), &conn);
        if (rc == -EAGAIN) return;
        if (rc < 0) {
            // Out of descriptors this repeats while the condition lasts: the
            // log limits the line, the transport pauses accepting (TCP).
            TW_WARN("listen", "accept on %s:%u (%s) failed: %s%s", self->address.c_str(), self->port,
                    ep->transport->name().c_str(), ep->transport->error_text(rc).c_str(),
                    rc == -EMFILE || rc == -ENFILE
                        ? "; waiting clients are closed until descriptors are free (raise the fd limit, ulimit -n)"
                        : "");
            return;
        }
        Runtime::Impl *rt = self->rt;
        Transport *transport = ep->transport;
        auto handler = self->on_accept;
        // The transport may have queued handshake work on `target`; posting
        // keeps our set_callback behind it (tasks run in order).
        if (!target.post([rt, &target, transport, conn, handler] {
                rt->adopt_accepted(target, *transport, conn, handler);
            }))
            ops.close(conn);
    }
}

void Runtime::Impl::adopt_accepted(Loop &loop, Transport &transport, tw_conn *conn,
                                   std::shared_ptr<AcceptHandler> handler)
{
    if (stopping) {
        transport.ops().close(conn);
        return;
    }
    uint64_t id = next_id.fetch_add(1, std::memory_order_relaxed);
    auto c = ConnectionAccess::create(
        loop, transport, conn, id, rt->config_, "accept handler",
        [handler, id](const ConnectionPtr &c, int err, const std::string &why) {
            if (err) {
                // A client that gave up, a stale request: nothing for the application.
                TW_DEBUG("accept", "incoming connection %llu dropped during its handshake: %s",
                         static_cast<unsigned long long>(id), why.c_str());
                return;
            }
            (*handler)(c);
        });
    if (c) track(loop, c);
}

std::shared_ptr<Listener> Runtime::listen(const ListenOptions &options, AcceptHandler on_accept)
{
    if (!impl_->started) throw StartupError(errc::not_started, "Runtime::listen() before start()");
    if (!loops_[0]->in_loop_thread())
        throw StartupError(errc::wrong_thread, "Runtime::listen() must be called on the main thread");
    if (!on_accept) throw std::invalid_argument("Runtime::listen(): the accept handler is empty");
    auto impl = std::make_shared<ListenerImpl>();
    impl->rt = impl_.get();
    impl->address = options.address.empty() ? config_.listen_address() : options.address;
    int port = options.port < 0 ? config_.listen_port() : options.port;
    int backlog = options.backlog < 0 ? config_.listen_backlog() : options.backlog;
    impl->on_accept = std::make_shared<AcceptHandler>(std::move(on_accept));

    struct sockaddr_storage ss;
    socklen_t len = 0;
    std::string err = resolve_address(impl->address, static_cast<uint16_t>(port), true, &ss, &len);
    if (!err.empty()) throw StartupError(errc::resolve_failed, "listen: " + err);

    // The last transport in use listens first: it must succeed, and with
    // port 0 it picks the port every other transport then uses.
    std::vector<Transport *> wanted(selection_.in_use.rbegin(), selection_.in_use.rend());
    for (Transport *t : wanted) {
        auto ep = std::make_unique<ListenerImpl::Endpoint>(ListenerImpl::Endpoint{impl.get(), t, nullptr});
        tw_listen_params p{};
        p.size = sizeof p;
        p.backlog = backlog;
        p.addr = reinterpret_cast<const struct sockaddr *>(&ss);
        p.addrlen = len;
        p.on_incoming = &ListenerImpl::on_incoming;
        p.arg = ep.get();
        int rc = t->ops().listen(t->tloop(*loops_[0]), &p, &ep->listener);
        std::string where = impl->address + ":" + std::to_string(get_port(&ss)) + " (" + t->name() + ")";
        if (rc < 0) {
            std::string why = "listen on " + where + ": " + t->error_text(rc);
            if (t != wanted.front() && selection_.fallback) {
                TW_WARN("listen", "%s; not listening over %s on this address", why.c_str(), t->name().c_str());
                continue;
            }
            impl->close_now();
            throw StartupError(code_from_transport(rc), why);
        }
        if (get_port(&ss) == 0) {
            // Port 0: every transport listens on the port the first one got.
            struct sockaddr_storage bound;
            uint32_t blen = sizeof bound;
            if (t->ops().listener_addr(ep->listener, reinterpret_cast<struct sockaddr *>(&bound), &blen) == 0)
                set_port(&ss, get_port(&bound));
        }
        impl->endpoints.insert(impl->endpoints.begin(), std::move(ep));
    }
    impl->port = get_port(&ss);
    {
        std::lock_guard<std::mutex> lock(impl_->listeners_mutex);
        impl_->listeners.push_back(impl);
    }
    std::string names;
    for (auto &ep : impl->endpoints) names += (names.empty() ? "" : "+") + ep->transport->name();
    TW_INFO("listen", "listening on %s:%u over %s", impl->address.c_str(), impl->port, names.c_str());
    return std::shared_ptr<Listener>(new Listener(impl));
}

} // namespace twinwire
