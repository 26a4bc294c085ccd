// SPDX-License-Identifier: MIT
// Listeners: one per transport in use, on the same address; on the same
// port too, but for a transport given its own (NAME.listen_port).
#include "connection_access.hpp"
#include "runtime_impl.hpp"
#include "sockaddr_text.hpp"
#include "transport_keys.hpp"

#include <twinwire/log.hpp>

#include <tw_socket_backend.h>

#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>
#include <cerrno>
#include <cstring>
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

uint16_t Listener::port(const std::string &transport) const
{
    for (const auto &ep : impl_->endpoints)
        if (ep->transport->name() == transport) return ep->port;
    return 0;
}
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
    if (!announced.empty()) TW_INFO("listen", "no longer listening on %s", announced.c_str());
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
        if (!target.post(
                [rt, &target, transport, conn, handler] { rt->adopt_accepted(target, *transport, conn, handler); }))
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
    auto c =
        ConnectionAccess::create(loop, transport, conn, id, config, "accept handler",
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

namespace {

/// unix_mode and unix_owner on the socket file at `path`; "" or the error.
std::string set_unix_permissions(const Config &config, const std::string &path)
{
    if (!config.get("unix_mode").empty()) {
        mode_t mode = static_cast<mode_t>(std::stoul(config.get("unix_mode"), nullptr, 8));
        if (chmod(path.c_str(), mode) < 0)
            return "chmod " + config.get("unix_mode") + " " + path + ": " + std::strerror(errno) + " (unix_mode)";
    }
    std::string owner = config.get("unix_owner");
    if (owner.empty()) return {};
    size_t colon = owner.find(':');
    std::string user = owner.substr(0, colon), group = colon == std::string::npos ? "" : owner.substr(colon + 1);
    uid_t uid = static_cast<uid_t>(-1);
    gid_t gid = static_cast<gid_t>(-1);
    if (!user.empty()) {
        struct passwd *pw = getpwnam(user.c_str());
        if (!pw) return "unix_owner: no user '" + user + "'";
        uid = pw->pw_uid;
    }
    if (!group.empty()) {
        struct group *gr = getgrnam(group.c_str());
        if (!gr) return "unix_owner: no group '" + group + "'";
        gid = gr->gr_gid;
    }
    if (chown(path.c_str(), uid, gid) < 0)
        return "chown " + owner + " " + path + ": " + std::strerror(errno) + " (unix_owner)";
    return {};
}

/// The path of a filesystem Unix address, "" for anything else.
std::string unix_path(const SocketAddress &a)
{
    if (a.ss.ss_family != AF_UNIX) return {};
    auto *un = reinterpret_cast<const struct sockaddr_un *>(&a.ss);
    return un->sun_path[0] ? std::string(un->sun_path, strnlen(un->sun_path, sizeof un->sun_path)) : std::string();
}

} // namespace

PassedSocket *Runtime::Impl::take_passed_socket(const std::string &name)
{
    for (auto &p : passed)
        if (!p.taken && (name.empty() || p.name == name)) {
            p.taken = true;
            return &p;
        }
    if (!name.empty()) {
        std::string names;
        for (const auto &p : passed) names += (names.empty() ? "" : ", ") + p.name + (p.taken ? " (taken)" : "");
        throw StartupError(errc::bad_config, "listen: no passed socket named '" + name + "' (LISTEN_FDNAMES: " +
                                                 (names.empty() ? std::string("none passed") : names) + ")");
    }
    return nullptr;
}

std::shared_ptr<Listener> Runtime::listen(const ListenOptions &options, AcceptHandler on_accept)
{
    if (!impl_->started) throw StartupError(errc::not_started, "Runtime::listen() before start()");
    if (!impl_->loops[0]->in_loop_thread())
        throw StartupError(errc::wrong_thread, "Runtime::listen() must be called on the main thread");
    if (!on_accept) throw std::invalid_argument("Runtime::listen(): the accept handler is empty");
    auto impl = std::make_shared<ListenerImpl>();
    impl->rt = impl_.get();
    impl->address = options.address.empty() ? impl_->config.listen_address() : options.address;
    int port = options.port < 0 ? impl_->config.listen_port() : options.port;
    int backlog = options.backlog < 0 ? impl_->config.listen_backlog() : options.backlog;
    impl->on_accept = std::make_shared<AcceptHandler>(std::move(on_accept));

    // The last transport in use listens first: it must succeed, and with
    // port 0 it picks the port every other transport then uses.
    std::vector<Transport *> wanted(impl_->selection.in_use.rbegin(), impl_->selection.in_use.rend());
    std::vector<SocketAddress> addresses;
    PassedSocket *passed = impl_->take_passed_socket(options.fd_name);
    if (passed) {
        // Socket activation: the TCP transport takes the socket as it is;
        // the others listen on its address.
        if (std::find(wanted.begin(), wanted.end(), impl_->selection.tcp.get()) == wanted.end())
            throw StartupError(errc::transport_unavailable,
                               "listen: socket activation passed fd " + std::to_string(passed->fd) +
                                   ", which only the tcp transport can take, and tcp is not in use (transport = " +
                                   impl_->config.transport() + ")");
        SocketAddress a;
        a.len = sizeof a.ss;
        if (getsockname(passed->fd, reinterpret_cast<struct sockaddr *>(&a.ss), &a.len) < 0)
            throw StartupError(std::error_code(errno, std::generic_category()),
                               "listen: passed fd " + std::to_string(passed->fd) + ": " + std::strerror(errno));
        addresses.push_back(a);
        impl->address = sockaddr_text(a.sa());
        if (a.ss.ss_family != AF_UNIX) impl->address = impl->address.substr(0, impl->address.rfind(':'));
    } else {
        std::string err = listen_addresses(impl->address, static_cast<uint16_t>(port), &addresses);
        if (!err.empty()) throw StartupError(errc::resolve_failed, "listen: " + err);
    }

    // Each transport's port: its own (NAME.listen_port) when the
    // configuration gives one and listen() was given no port, else the
    // shared one.  Port 0 becomes the port the first address got.
    uint16_t shared_port = get_port(&addresses.front().ss); // a passed socket's own, else `port`
    std::unordered_map<Transport *, uint16_t> own_port;
    if (options.port < 0 && !passed)
        for (Transport *t : wanted)
            if (auto p = own_listen_port(impl_->config, t->name())) own_port[t] = *p;
    for (size_t i = 0; i < addresses.size(); ++i) {
        for (Transport *t : wanted) {
            SocketAddress ss = addresses[i];
            auto own = own_port.find(t);
            set_port(&ss.ss, own != own_port.end() ? own->second : shared_port);
            auto ep = std::make_unique<ListenerImpl::Endpoint>(ListenerImpl::Endpoint{impl.get(), t, nullptr, 0});
            tw_listen_params p{};
            p.size = sizeof p;
            p.backlog = backlog;
            p.addr = ss.sa();
            p.addrlen = ss.len;
            p.on_incoming = &ListenerImpl::on_incoming;
            p.arg = ep.get();
            int rc;
            if (passed && t == impl_->selection.tcp.get()) {
                tw_tcp_adopt_listener adopt{};
                adopt.size = sizeof adopt;
                adopt.fd = passed->fd;
                adopt.tloop = t->tloop(*impl_->loops[0]);
                adopt.params = &p;
                rc = t->ops().ctrl(t->handle(), nullptr, "tcp", TW_TCP_CTRL_ADOPT_LISTENER, &adopt, sizeof adopt);
                ep->listener = adopt.listener;
            } else {
                rc = t->ops().listen(t->tloop(*impl_->loops[0]), &p, &ep->listener);
            }
            std::string where =
                sockaddr_text(ss.sa()) + " (" + t->name() + (passed ? ", passed by the service manager" : "") + ")";
            if (rc < 0) {
                std::string why = "listen on " + where + ": " + t->error_text(rc);
                if (rc == -EADDRINUSE && own == own_port.end() && !impl->endpoints.empty() &&
                    get_port(&ss.ss) == impl->endpoints.front()->port)
                    why += " (another transport in use listens on this port: give one of them its own, " +
                           own_port_key(t->name()) + ")";
                // A transport other than the last, or an address other than the first of a name: skipped.
                if ((t != wanted.front() && impl_->selection.fallback) || (i > 0 && !impl->endpoints.empty())) {
                    TW_WARN("listen", "%s; not listening over %s on this address", why.c_str(), t->name().c_str());
                    continue;
                }
                impl->close_now();
                throw StartupError(code_from_transport(rc), why);
            }
            uint16_t bound_port = get_port(&ss.ss);
            if (bound_port == 0 && ss.ss.ss_family != AF_UNIX) {
                // Port 0: learn the port the kernel gave; the others follow it.
                struct sockaddr_storage bound;
                uint32_t blen = sizeof bound;
                if (t->ops().listener_addr(ep->listener, reinterpret_cast<struct sockaddr *>(&bound), &blen) == 0)
                    bound_port = get_port(&bound);
                if (own != own_port.end()) own->second = bound_port;
                else shared_port = bound_port;
            }
            ep->port = bound_port;
            impl->endpoints.insert(impl->endpoints.begin(), std::move(ep));
        }
    }
    // The port of the first transport in order of preference.
    if (!impl->endpoints.empty()) impl->port = impl->endpoints.front()->port;
    std::string path = passed ? std::string() : unix_path(addresses.front());
    if (!path.empty()) {
        std::string err = set_unix_permissions(impl_->config, path);
        if (!err.empty()) {
            impl->close_now();
            throw StartupError(errc::permission_denied, "listen: " + err);
        }
    }
    {
        std::lock_guard<std::mutex> lock(impl_->listeners_mutex);
        impl_->listeners.push_back(impl);
    }
    // "127.0.0.1:6379 over rdma+tcp and 127.0.0.1:6380 over tls": one part per port.
    bool is_unix = addresses.front().ss.ss_family == AF_UNIX;
    std::vector<std::pair<uint16_t, std::string>> by_port;
    for (auto &ep : impl->endpoints) {
        auto it = std::find_if(by_port.begin(), by_port.end(), [&](const auto &e) { return e.first == ep->port; });
        if (it == by_port.end()) by_port.emplace_back(ep->port, ep->transport->name());
        else if (it->second.find(ep->transport->name()) == std::string::npos) it->second += "+" + ep->transport->name();
    }
    impl->announced.clear();
    for (const auto &[p, names] : by_port)
        impl->announced += (impl->announced.empty() ? "" : " and ") +
                           (is_unix ? impl->address : impl->address + ":" + std::to_string(p)) + " over " + names;
    TW_INFO("listen", "listening on %s%s%s", impl->announced.c_str(),
            addresses.size() > 1 ? " (every address of the name)" : "",
            passed ? " (a socket passed by the service manager)" : "");
    return std::shared_ptr<Listener>(new Listener(impl));
}

} // namespace twinwire
