// SPDX-License-Identifier: MIT
// The process's namespace: listeners by address and port, the ports given
// out, and the loops a wake-up task may still name after they detached.
// Process-wide on purpose: two runtimes of one process reach each other.
#include "pair.hpp"

#include <cerrno>
#include <map>

namespace twpair {
namespace {

// Ports given out for port 0 and to clients, counting up from the start of
// the dynamic range (a port just closed is not handed out again soon).
constexpr uint16_t kFirstPort = 49152;
constexpr unsigned kPorts = 65536u - kFirstPort;

struct Registry {
    std::mutex mutex;
    std::vector<tw_listener *> listeners;
    unsigned next_port = 0;
    uint64_t next_loop_id = 1;
    std::map<uint64_t, tw_transport_loop *> loops;
};

Registry &registry()
{
    static Registry *r = new Registry; // never destroyed: tasks may run at exit
    return *r;
}

/// Does listener `l` take connections to `to` (ports aside)?
bool takes(const tw_listener *l, const sockaddr_storage &to)
{
    if (l->addr.ss_family == to.ss_family) return is_wildcard(l->addr) || same_ip(l->addr, to);
    // A dual-stack IPv6 wildcard takes IPv4 too.
    return l->addr.ss_family == AF_INET6 && to.ss_family == AF_INET && is_wildcard(l->addr) &&
           !(l->flags & TW_LISTEN_V6ONLY);
}

/// Would `a` and `b` on one port take some of the same connections?
bool overlap(const tw_listener *a, const tw_listener *b)
{
    if (a->addr.ss_family == b->addr.ss_family)
        return is_wildcard(a->addr) || is_wildcard(b->addr) || same_ip(a->addr, b->addr);
    return takes(a, b->addr) || takes(b, a->addr);
}

bool in_use(const Registry &r, const tw_listener *l)
{
    for (const tw_listener *other : r.listeners)
        if (port_of(other->addr) == port_of(l->addr) && overlap(other, l)) return true;
    return false;
}

uint16_t next_port(Registry &r) { return static_cast<uint16_t>(kFirstPort + r.next_port++ % kPorts); }

} // namespace

std::mutex &registry_mutex() { return registry().mutex; }

int registry_add_listener(tw_listener *l)
{
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (port_of(l->addr) == 0) {
        unsigned tries = 0;
        do {
            set_port(l->addr, next_port(r));
        } while (in_use(r, l) && ++tries < kPorts);
        if (tries == kPorts) return -EADDRINUSE;
    } else if (in_use(r, l)) {
        return -EADDRINUSE;
    }
    r.listeners.push_back(l);
    return 0;
}

void registry_remove_listener(tw_listener *l)
{
    Registry &r = registry();
    for (size_t i = 0; i < r.listeners.size(); i++)
        if (r.listeners[i] == l) {
            r.listeners.erase(r.listeners.begin() + static_cast<long>(i));
            return;
        }
}

tw_listener *registry_find_listener(const sockaddr_storage &to)
{
    // Listeners never overlap (registry_add_listener), so at most one takes it.
    for (tw_listener *l : registry().listeners)
        if (port_of(l->addr) == port_of(to) && takes(l, to)) return l;
    return nullptr;
}

uint16_t registry_client_port()
{
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    return next_port(r);
}

uint64_t registry_add_loop(tw_transport_loop *tl)
{
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    uint64_t id = r.next_loop_id++;
    r.loops[id] = tl;
    return id;
}

void registry_remove_loop(tw_transport_loop *tl)
{
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.loops.erase(tl->id);
}

tw_transport_loop *registry_find_loop(uint64_t id)
{
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.loops.find(id);
    return it == r.loops.end() ? nullptr : it->second;
}

} // namespace twpair
