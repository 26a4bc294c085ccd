// SPDX-License-Identifier: MIT
// kvd-fault-load: clients that keep writing checksummed values to
// twinwire-kvd and reading them back while the wire, the link or the device
// fails under them (tests/kvd/guest_faults.sh).  Each client owns a few
// keys; every value names its client and sequence number and ends with a
// checksum of the rest, so a value read back proves which write it was.
//
//   kvd-fault-load --port P [--host H] [--source ADDR] [--transport NAME]
//                  [--clients N] [--keys K] [--duration-s S] [--final-timeout-s T]
//
// A write counts as acknowledged once +OK arrived.  A read must return a
// value that is intact and no older than the last write acknowledged before
// the read was sent (a write sent but never acknowledged may or may not have
// been applied: both are fine).  A broken connection is reconnected every
// 250 ms.  After S seconds every client reads all its keys once more.
// Prints one summary line per figure; exit status 0 when nothing was lost or
// corrupted and the final reads completed, 1 otherwise.
#include "bench/resp_reply.hpp"
#include "client_tool.hpp"

#include <twinwire/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace resp = twinwire::bench::resp;
using Clock = std::chrono::steady_clock;

struct Options {
    std::string host = "127.0.0.1";
    int port = -1;
    std::string source;
    std::string transport = "rdma";
    unsigned clients = 64;
    unsigned keys = 16;
    unsigned duration_s = 30;
    unsigned final_timeout_s = 60;
};

[[noreturn]] void usage(const std::string &why) { kvdtool::usage("kvd-fault-load", why); }

Options parse(int argc, char **argv)
{
    Options o;
    kvdtool::Args args("kvd-fault-load", argc, argv);
    auto value = [&] { return args.value(); };
    std::string a;
    while (args.next(&a)) {
        if (a == "--host") o.host = value();
        else if (a == "--port") o.port = std::stoi(value());
        else if (a == "--source") o.source = value();
        else if (a == "--transport") o.transport = value();
        else if (a == "--clients") o.clients = static_cast<unsigned>(std::stoul(value()));
        else if (a == "--keys") o.keys = static_cast<unsigned>(std::stoul(value()));
        else if (a == "--duration-s") o.duration_s = static_cast<unsigned>(std::stoul(value()));
        else if (a == "--final-timeout-s") o.final_timeout_s = static_cast<unsigned>(std::stoul(value()));
        else usage("unknown argument " + a);
    }
    if (o.port < 0) usage("--port is required");
    if (o.clients == 0 || o.keys == 0) usage("--clients and --keys must be at least 1");
    return o;
}

uint64_t fnv1a(const std::string &s)
{
    uint64_t h = 1469598103934665603ull;
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
    return h;
}

/// The value of write `seq` of client `id`: 32 B to about 1 KiB, its
/// checksum last.
std::string make_value(unsigned id, uint64_t seq)
{
    uint64_t x = (uint64_t(id) << 40) ^ (seq * 0x9e3779b97f4a7c15ull) ^ 0x5bd1e995u;
    std::string v = "v:" + std::to_string(id) + ":" + std::to_string(seq) + ":";
    size_t len = 32 + size_t(x % 993);
    while (v.size() < len) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v += char('a' + x % 26);
    }
    char sum[24];
    std::snprintf(sum, sizeof sum, ":%016" PRIx64, fnv1a(v));
    return v + sum;
}

/// The sequence number a value names, if it is intact; -1 if not.
int64_t check_value(const std::string &v, unsigned id)
{
    std::string head = "v:" + std::to_string(id) + ":";
    if (v.compare(0, head.size(), head) != 0) return -1;
    uint64_t seq = std::strtoull(v.c_str() + head.size(), nullptr, 10);
    return v == make_value(id, seq) ? int64_t(seq) : -1;
}

std::string encode(const std::vector<std::string> &words)
{
    std::string out = "*" + std::to_string(words.size()) + "\r\n";
    for (const auto &w : words) out += "$" + std::to_string(w.size()) + "\r\n" + w + "\r\n";
    return out;
}

struct Totals {
    uint64_t acked = 0, reads = 0, final_reads = 0, corrupted = 0, lost = 0, bad_replies = 0;
    uint64_t errors = 0, errors_without_reason = 0, reconnects = 0, connect_failures = 0;
    std::map<std::string, uint64_t> reconnects_by_transport;
    std::map<std::string, uint64_t> reasons;
    int64_t longest_silence_ms = 0, longest_outage_ms = 0;
    unsigned finished = 0;
};

class Client {
public:
    Client(twinwire::Runtime &rt, const Options &o, Totals &totals, unsigned id)
        : rt_(rt), o_(o), totals_(totals), id_(id), keys_(o.keys), retry_(rt.loop(0), [this] { connect(); })
    {
    }

    void connect()
    {
        twinwire::ConnectOptions co(o_.host, static_cast<uint16_t>(o_.port));
        co.source_address = o_.source;
        co.loop = 0;
        co.transport = o_.transport;
        co.timeout_ms = 3000;
        rt_.connect(co, [this](const twinwire::ConnectionPtr &c, const std::string &error) {
            if (!c) {
                totals_.connect_failures += 1;
                if (totals_.connect_failures <= 3) std::fprintf(stderr, "connect: %s\n", error.c_str());
                return retry_.start(std::chrono::milliseconds(250));
            }
            if (ever_connected_) {
                totals_.reconnects += 1;
                totals_.reconnects_by_transport[c->transport_name()] += 1;
            }
            ever_connected_ = true;
            conn_ = c;
            in_.clear();
            waiting_ = false;
            c->on_data([this](twinwire::Connection &, twinwire::Buffer &in) {
                in_ += in.take(in.size());
                on_replies();
            });
            c->on_close([this](twinwire::Connection &, const twinwire::CloseInfo &info) { on_closed(info); });
            next();
        });
    }

    /// Time is up: read every acknowledged key once more, then stop.
    void finish()
    {
        final_ = true;
        if (conn_ && !waiting_) next();
    }
    bool done() const { return done_; }

private:
    struct Key {
        uint64_t acked = 0; ///< highest acknowledged write (0: none)
        bool written = false;
    };
    enum class Op { Set, Get };

    void next()
    {
        if (done_ || !conn_ || waiting_) return;
        ++ops_;
        if (final_) {
            while (final_key_ < keys_.size() && !keys_[final_key_].written) ++final_key_;
            if (final_key_ == keys_.size()) {
                done_ = true;
                totals_.finished += 1;
                conn_->close();
                return;
            }
            return send_get(final_key_);
        }
        if (ops_ % 4 == 0) {
            unsigned k = unsigned(ops_ / 4 % keys_.size());
            if (keys_[k].written) return send_get(k);
        }
        ++seq_;
        op_ = Op::Set;
        key_ = unsigned(seq_ % keys_.size());
        keys_[key_].written = true;
        sent_seq_ = seq_;
        send(encode({"SET", key_name(key_), make_value(id_, seq_)}));
    }

    void send_get(unsigned k)
    {
        op_ = Op::Get;
        key_ = k;
        floor_ = keys_[k].acked;
        send(encode({"GET", key_name(k)}));
    }

    void send(const std::string &request)
    {
        waiting_ = true;
        sent_at_ = Clock::now();
        conn_->write(request);
    }

    std::string key_name(unsigned k) const { return "fl:" + std::to_string(id_) + ":" + std::to_string(k); }

    void on_replies()
    {
        for (;;) {
            resp::Value v;
            resp::Reply reply = resp::parse_reply(in_, v);
            if (reply.outcome == resp::Reply::Outcome::Incomplete) return;
            if (reply.outcome == resp::Reply::Outcome::Malformed || !waiting_) {
                totals_.bad_replies += 1;
                conn_->close();
                return;
            }
            in_.erase(0, reply.length);
            waiting_ = false;
            last_reply_ = Clock::now();
            if (broken_at_ != Clock::time_point{}) {
                auto outage = std::chrono::duration_cast<std::chrono::milliseconds>(last_reply_ - broken_at_).count();
                totals_.longest_outage_ms = std::max<int64_t>(totals_.longest_outage_ms, outage);
                broken_at_ = {};
            }
            if (op_ == Op::Set) {
                if (v.type == resp::Type::Status && v.text == "OK") {
                    totals_.acked += 1;
                    keys_[key_].acked = std::max(keys_[key_].acked, sent_seq_);
                } else {
                    totals_.bad_replies += 1;
                }
            } else {
                check_read(v);
            }
            next();
        }
    }

    void check_read(const resp::Value &v)
    {
        (final_ ? totals_.final_reads : totals_.reads) += 1;
        if (final_) ++final_key_;
        if (v.type == resp::Type::NullBulk) {
            if (floor_ > 0) {
                totals_.lost += 1;
                std::fprintf(stderr, "client %u key %u: no value, acknowledged write %" PRIu64 " lost\n", id_, key_,
                             floor_);
            }
            return;
        }
        int64_t seq = v.type == resp::Type::Bulk ? check_value(v.text, id_) : -1;
        if (seq < 0 || uint64_t(seq) % keys_.size() != key_ || uint64_t(seq) > seq_) {
            totals_.corrupted += 1;
            std::fprintf(stderr, "client %u key %u: corrupted value (%zu bytes)\n", id_, key_, v.text.size());
        } else if (uint64_t(seq) < floor_) {
            totals_.lost += 1;
            std::fprintf(stderr, "client %u key %u: write %" PRId64 " read back, acknowledged write %" PRIu64 " lost\n",
                         id_, key_, seq, floor_);
        }
    }

    void on_closed(const twinwire::CloseInfo &info)
    {
        conn_.reset();
        if (done_) return;
        auto now = Clock::now();
        totals_.errors += 1;
        if (info.reason.empty()) totals_.errors_without_reason += 1;
        totals_.reasons[info.reason.substr(0, 120)] += 1;
        // How long the connection was silent before it reported the error:
        // the time the fault took to be detected.
        auto since = std::max(last_reply_, sent_at_);
        if (since != Clock::time_point{}) {
            auto silence = std::chrono::duration_cast<std::chrono::milliseconds>(now - since).count();
            totals_.longest_silence_ms = std::max<int64_t>(totals_.longest_silence_ms, silence);
        }
        if (broken_at_ == Clock::time_point{}) broken_at_ = now;
        waiting_ = false;
        retry_.start(std::chrono::milliseconds(250));
    }

    twinwire::Runtime &rt_;
    const Options &o_;
    Totals &totals_;
    unsigned id_;
    std::vector<Key> keys_;
    twinwire::Timer retry_;
    twinwire::ConnectionPtr conn_;
    std::string in_;
    bool ever_connected_ = false, waiting_ = false, final_ = false, done_ = false;
    uint64_t seq_ = 0, sent_seq_ = 0, floor_ = 0, ops_ = 0;
    unsigned key_ = 0, final_key_ = 0;
    Op op_ = Op::Set;
    Clock::time_point sent_at_{}, last_reply_{}, broken_at_{};
};

} // namespace

int main(int argc, char **argv)
{
    Options o = parse(argc, argv);
    auto runtime = kvdtool::start_runtime("kvd-fault-load", o.transport, "error");
    if (!runtime) return 1;
    twinwire::Runtime &rt = *runtime;
    Totals totals;
    std::vector<std::unique_ptr<Client>> clients;
    for (unsigned i = 0; i < o.clients; ++i) clients.push_back(std::make_unique<Client>(rt, o, totals, i));
    for (auto &c : clients) c->connect();

    bool timed_out = false;
    twinwire::Timer give_up(rt.loop(0), [&] {
        timed_out = true;
        rt.stop(false);
    });
    twinwire::Timer check_done(rt.loop(0), [&] {
        if (totals.finished == clients.size()) rt.stop(false);
    });
    twinwire::Timer end_load(rt.loop(0), [&] {
        for (auto &c : clients) c->finish();
        give_up.start(std::chrono::seconds(o.final_timeout_s));
        check_done.start(std::chrono::milliseconds(100), std::chrono::milliseconds(100));
    });
    end_load.start(std::chrono::seconds(o.duration_s));
    rt.run();

    std::printf("clients: %u, keys each: %u, load: %u s\n", o.clients, o.keys, o.duration_s);
    std::printf("writes acknowledged: %" PRIu64 "\n", totals.acked);
    std::printf("reads checked: %" PRIu64 " under load, %" PRIu64 " at the end\n", totals.reads, totals.final_reads);
    std::printf("corrupted: %" PRIu64 "\nlost: %" PRIu64 "\nbad replies: %" PRIu64 "\n", totals.corrupted, totals.lost,
                totals.bad_replies);
    std::printf("connection errors: %" PRIu64 " (%" PRIu64 " without a reason), longest silence before one: %" PRId64
                " ms\n",
                totals.errors, totals.errors_without_reason, totals.longest_silence_ms);
    std::string by;
    for (const auto &[name, n] : totals.reconnects_by_transport)
        by += (by.empty() ? "" : ", ") + name + " " + std::to_string(n);
    std::printf("reconnects: %" PRIu64 " (%s), connects refused or failed: %" PRIu64 ", longest outage: %" PRId64
                " ms\n",
                totals.reconnects, by.empty() ? "none" : by.c_str(), totals.connect_failures, totals.longest_outage_ms);
    for (const auto &[reason, n] : totals.reasons) std::printf("error: %" PRIu64 " x %s\n", n, reason.c_str());
    std::printf("final reads: %s (%u of %zu clients)\n", timed_out ? "incomplete" : "complete", totals.finished,
                clients.size());
    bool ok = !timed_out && totals.corrupted == 0 && totals.lost == 0 && totals.bad_replies == 0 &&
              totals.errors_without_reason == 0 && totals.acked > 0;
    return ok ? 0 : 1;
}
