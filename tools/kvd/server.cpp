// SPDX-License-Identifier: MIT
#include "server.hpp"

#include "lent_replies.hpp"

#include <twinwire/log.hpp>

#include <new>

namespace kvd {
namespace {

// Replies gathered before they are handed to the connection; past this the
// session stops, and reading pauses until the connection drained them.
constexpr size_t kReplyBacklog = 1u << 20;
// A reply buffer that grew for one huge reply does not stay that large.
constexpr size_t kKeepReplyCapacity = 4u << 20;
// Expired keys nobody asks for are deleted by a sweep on loop 0, at most
// this many expiry records per tick: lazy expiry on access does the rest.
constexpr auto kSweepPeriod = std::chrono::milliseconds(100);
constexpr size_t kSweepBudget = 20000;
// Replies wait for the end of the loop's pass over ready connections (a
// zero-delay timer fires after them), like Redis' write-before-sleep: the
// client then finds many replies at once instead of being woken per reply.
constexpr auto kFlushNow = std::chrono::nanoseconds(0);
// How long a refused client may take to end its side after our error reply.
constexpr auto kRefusalLinger = std::chrono::milliseconds(2000);

// Refuse a client politely: closing with its first request still unread is an
// abortive close (TCP: a reset; RDMA: a disconnect without SHUTDOWN) that can
// overtake the error reply, and over RDMA the reply cannot leave before the
// client named its ring.  So: the error, then our end-of-stream; what the
// client sends is discarded; close at its end-of-stream, or after a bound.
void refuse(const twinwire::ConnectionPtr &conn, std::string_view reply)
{
    conn->write(reply);
    conn->on_data([](twinwire::Connection &, twinwire::Buffer &input) { input.clear(); });
    conn->on_eof([](twinwire::Connection &c) { c.close(); });
    conn->shutdown_write();
    std::weak_ptr<twinwire::Connection> weak = conn;
    auto timer = std::make_shared<twinwire::Timer>(conn->loop(), [weak] {
        if (auto c = weak.lock()) c->close();
    });
    timer->start(kRefusalLinger);
    // The timer may be what closes the connection: free it from the loop,
    // never from inside its own callback.
    conn->on_close(
        [timer](twinwire::Connection &c, const twinwire::CloseInfo &) { c.loop().post([timer] { timer->stop(); }); });
}

} // namespace

struct Server::Client {
    Client(Server &server, const RequestLimits &limits, SessionCounters &counters, std::string peer_address,
           std::atomic<size_t> *transport_count)
        : session(server.keyspace_, server, limits, counters), peer(std::move(peer_address)),
          transport_clients(transport_count)
    {
    }
    Session session;
    std::string out;
    std::string peer;                       ///< for log lines, kept after the connection is gone
    std::atomic<size_t> *transport_clients; ///< this client's count in clients_by_transport_
    bool paused = false;
    /// Sends `out` after the current pass; owned here, so it dies with the
    /// connection (whose context this is) on the connection's loop.
    std::unique_ptr<twinwire::Timer> flush;
    /// kvd.zero_copy: large replies into lent send buffers.
    std::unique_ptr<LentReplies> lender;
};

Server::Server(twinwire::Runtime &runtime, const Settings &settings, Keyspace &keyspace, std::string config_file)
    : runtime_(runtime), settings_(settings), keyspace_(keyspace), config_file_(std::move(config_file)),
      started_ms_(MonotonicClock().now_ms())
{
    for (size_t i = 0; i < runtime_.loop_count(); ++i) loop_stats_.push_back(std::make_unique<LoopStats>());
    std::vector<std::string> names{"tcp", "rdma"};
    for (const auto &t : runtime_.selection().plugins)
        if (t->name() != "rdma") names.push_back(t->name());
    for (auto &n : names) clients_by_transport_.emplace_back(n, std::make_unique<std::atomic<size_t>>(0));
}

Server::~Server() = default;

void Server::start()
{
    listener_ = runtime_.listen({}, [this](const twinwire::ConnectionPtr &conn) { accept(conn); });
    sweep_timer_ = std::make_unique<twinwire::Timer>(runtime_.loop(0), [this] { keyspace_.sweep(kSweepBudget); });
    sweep_timer_->start(kSweepPeriod, kSweepPeriod);
}

uint16_t Server::port() const { return listener_ ? listener_->port() : 0; }

std::string Server::listening_transports() const
{
    std::string names;
    if (listener_)
        for (const auto &t : listener_->transports()) names += (names.empty() ? "" : "+") + t;
    return names;
}

std::string Server::own_ports() const
{
    std::string list;
    if (listener_)
        for (const auto &t : listener_->transports())
            if (listener_->port(t) != listener_->port())
                list += (list.empty() ? "" : ", ") + t + " on port " + std::to_string(listener_->port(t));
    return list.empty() ? list : " (" + list + ")";
}

void Server::accept(const twinwire::ConnectionPtr &conn)
{
    try {
        admit(conn);
    } catch (const std::bad_alloc &) {
        TW_WARN("kvd", "out of memory accepting a client; closing its connection");
        conn->abort();
    }
}

void Server::admit(const twinwire::ConnectionPtr &conn)
{
    LoopStats &stats = *loop_stats_.at(conn->loop().index());
    stats.accepted.fetch_add(1, std::memory_order_relaxed);
    if (clients_.fetch_add(1) >= settings_.maxclients) {
        clients_.fetch_sub(1);
        rejected_.fetch_add(1, std::memory_order_relaxed);
        TW_WARN("kvd", "refusing client %s: kvd.maxclients (%zu) reached", conn->peer_address().c_str(),
                settings_.maxclients);
        refuse(conn, "-ERR max number of clients reached\r\n");
        return;
    }
    std::atomic<size_t> *count = nullptr;
    for (auto &t : clients_by_transport_)
        if (t.first == conn->transport_name()) count = t.second.get();
    if (count) count->fetch_add(1);
    auto client = std::make_shared<Client>(*this, settings_.limits, stats.session, conn->peer_address(), count);
    client->session.connection = conn.get();
    client->session.peer = client->peer;
    conn->set_context(client);
    Client *c = client.get(); // the connection owns it (context) for its whole life
    twinwire::Connection *cn = conn.get();
    // Captures stay small: the timer copies its callback each time it fires.
    c->flush = std::make_unique<twinwire::Timer>(conn->loop(), [this, cn] { send(*cn, *cn->context<Client>()); });
    conn->on_data([this, c](twinwire::Connection &cn, twinwire::Buffer &input) {
        serve(cn, *c, [c, &input] { return c->session.feed(input, c->out, kReplyBacklog); });
    });
    if (settings_.zero_copy) {
        c->lender = std::make_unique<LentReplies>(*conn);
        c->session.lender = c->lender.get();
        conn->on_borrowed_data([this, c](twinwire::Connection &cn, const char *data, size_t len) {
            return serve_borrowed(cn, *c, std::string_view(data, len));
        });
    }
    conn->on_drain([c](twinwire::Connection &cn) {
        if (!c->paused) return;
        c->paused = false;
        cn.resume_reading();
    });
    // Requests that arrived with the client's end-of-stream (nc -N) still get
    // their replies, which the flush timer would otherwise send too late.
    conn->on_eof([this, c](twinwire::Connection &cn) {
        if (send(cn, *c)) cn.close();
    });
    conn->on_close([this, c](twinwire::Connection &cn, const twinwire::CloseInfo &info) { finish(cn, *c, info); });
    TW_DEBUG("kvd", "client %s connected over %s (connection %llu)", c->peer.c_str(), conn->transport_name().c_str(),
             static_cast<unsigned long long>(conn->id()));
}

Session::Outcome Server::serve(twinwire::Connection &conn, Client &client,
                               const std::function<Session::Outcome()> &feed)
{
    // The session turns its own allocation failures into a close; this
    // catches the rest (queueing, logging) so one client never ends the
    // daemon.
    try {
        return serve_requests(conn, client, feed);
    } catch (const std::bad_alloc &) {
        std::string().swap(client.out);
        TW_WARN("kvd", "client %s: out of memory while serving it; closing the connection", client.peer.c_str());
        conn.abort();
        return Session::Outcome::Close;
    }
}

Session::Outcome Server::serve_requests(twinwire::Connection &conn, Client &client,
                                        const std::function<Session::Outcome()> &feed)
{
    for (;;) {
        Session::Outcome outcome = feed();
        switch (outcome) {
        case Session::Outcome::Idle:
            if (!client.out.empty() && !client.flush->active()) client.flush->start(kFlushNow);
            return outcome;
        case Session::Outcome::Close:
            if (client.session.protocol_error() || client.session.out_of_memory())
                TW_WARN("kvd", "client %s over %s: %s; closing the connection", client.peer.c_str(),
                        conn.transport_name().c_str(), client.session.close_reason().c_str());
            if (send(conn, client)) conn.close();
            return outcome;
        case Session::Outcome::Backlogged:
            if (!send(conn, client) || client.paused) return outcome;
            continue; // the transport took most of it: go on
        }
    }
}

// The requests are parsed where the transport received them; what is left
// (a request split across buffers) goes to the input buffer and on_data.
size_t Server::serve_borrowed(twinwire::Connection &conn, Client &client, std::string_view bytes)
{
    size_t done = 0;
    Session::Outcome outcome = serve(conn, client, [&] {
        size_t used = 0;
        Session::Outcome o = client.session.feed_borrowed(bytes.substr(done), client.out, kReplyBacklog, used);
        done += used;
        return o;
    });
    return outcome == Session::Outcome::Close ? bytes.size() : done;
}

bool Server::send(twinwire::Connection &conn, Client &client)
{
    client.flush->stop();
    if (client.out.empty() || !conn.is_open()) return conn.is_open();
    if (!conn.write(client.out)) {
        TW_WARN("kvd", "client %s: %zu bytes of replies would exceed write_buffer_limit; closing it",
                client.peer.c_str(), client.out.size() + conn.output_queued());
        conn.abort();
        return false;
    }
    if (client.out.capacity() > kKeepReplyCapacity) std::string().swap(client.out);
    else client.out.clear();
    // A client that does not read its replies: stop reading its requests
    // until they drained, rather than queue up to write_buffer_limit.
    if (conn.output_queued() > kReplyBacklog && !client.paused) {
        conn.pause_reading();
        client.paused = true;
    }
    return true;
}

void Server::finish(twinwire::Connection &conn, Client &client, const twinwire::CloseInfo &info)
{
    clients_.fetch_sub(1);
    if (client.transport_clients) client.transport_clients->fetch_sub(1);
    client.session.connection = nullptr;
    TW_DEBUG("kvd", "client %s (connection %llu) gone: %s", client.peer.c_str(),
             static_cast<unsigned long long>(conn.id()), info.reason.c_str());
}

uint64_t Server::total(std::atomic<uint64_t> LoopStats::*field) const
{
    uint64_t n = 0;
    for (const auto &s : loop_stats_) n += ((*s).*field).load(std::memory_order_relaxed);
    return n;
}

uint64_t Server::total_session(std::atomic<uint64_t> SessionCounters::*field) const
{
    uint64_t n = 0;
    for (const auto &s : loop_stats_) n += (s->session.*field).load(std::memory_order_relaxed);
    return n;
}

} // namespace kvd
