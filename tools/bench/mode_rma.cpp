// SPDX-License-Identifier: MIT
// twinwire-bench rma: one-sided remote memory against the byte stream, server
// and client in one process over the configured transport.  For each round
// and size: `stream` (one direction, as `local -t throughput` writes it, the
// server timing what it received), `rma-write` and `rma-read` (a window of
// transfers kept in flight against one exposure).  Every read is compared
// with what the exposure holds; every write slot is checked by the server.
#include "modes.hpp"
#include "runtime_setup.hpp"

#include <twinwire/loop.hpp>
#include <twinwire/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

namespace twinwire::bench {
namespace {

uint64_t now_ns()
{
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

std::string pattern(size_t slot, size_t len)
{
    std::string s(len, '\0');
    for (size_t i = 0; i < len; ++i) s[i] = static_cast<char>((slot * 131 + i * 7 + i / 4093) & 0xff);
    return s;
}

/// The server's side: an RMA listener whose connections each expose a region
/// of memory the transport lends (registered once over RDMA), and a plain
/// one that times what it receives.
struct Server {
    size_t region_size; ///< [0, half): read slots, prefilled; [half, 2 half): write slots
    size_t slot_size;
    unsigned slots;
    std::shared_ptr<Listener> rma_listener, stream_listener;

    Server(Runtime &rt, const RmaOptions &o, size_t max_size)
        : region_size(2 * max_size * o.window), slot_size(max_size), slots(o.window)
    {
        ListenOptions lo;
        lo.address = o.listen;
        lo.port = 0;
        rma_listener = rt.listen(lo, [this](const ConnectionPtr &c) { serve_rma(c); });
        stream_listener = rt.listen(lo, [](const ConnectionPtr &c) { serve_stream(c); });
    }

    /// One RMA connection's region, exposure and line handler.  Only the
    /// connection's handlers hold it, so it goes (the region freed, the
    /// exposure revoked) when the connection ends: anyone may connect here,
    /// and each connection costs region_size.
    struct RmaSession {
        RmaMemoryPtr region;
        RmaExposurePtr exposure;
        Connection::RecordHandler on_line;
    };

    void serve_rma(const ConnectionPtr &c)
    {
        std::string why;
        if (!c->enable_rma(&why)) throw std::runtime_error("enable_rma: " + why);
        auto session = std::make_shared<RmaSession>();
        session->region = c->rma_memory(region_size, &why);
        if (!session->region) throw std::runtime_error("rma_memory: " + why);
        char *base = session->region->data();
        for (unsigned k = 0; k < slots; ++k) {
            std::string p = pattern(k, slot_size);
            std::memcpy(base + k * slot_size, p.data(), p.size());
        }
        session->exposure = c->expose(base, session->region->size(), RmaAccess::read_write, &why);
        if (!session->exposure) throw std::runtime_error("expose: " + why);
        const std::string &d = session->exposure->descriptor();
        c->write(std::string(1, static_cast<char>(d.size())) + d);
        // The line handler asks for the next line with itself: a raw pointer,
        // so that the session does not hold itself alive.
        RmaSession *self = session.get();
        session->on_line = [this, self, base](Connection &conn, std::string line) {
            // "CHECK size count": every write slot used holds its pattern.
            unsigned long long size = 0, count = 0;
            if (sscanf(line.c_str(), "CHECK %llu %llu", &size, &count) != 2) return conn.close();
            size_t bad = 0, half = region_size / 2;
            for (unsigned k = 0; k < std::min<unsigned long long>(count, slots); ++k)
                bad += std::memcmp(base + half + k * slot_size, pattern(k, size).data(), size) != 0;
            conn.write(bad ? "BAD " + std::to_string(bad) + "\n" : std::string("OK\n"));
            conn.read_until("\n", 256, self->on_line);
        };
        c->on_close([session](Connection &, const CloseInfo &) {});
        c->read_until("\n", 256, session->on_line);
    }

    static void serve_stream(const ConnectionPtr &c)
    {
        auto got = std::make_shared<std::pair<uint64_t, std::pair<uint64_t, uint64_t>>>(); // bytes, first, last
        c->on_data([got](Connection &, Buffer &in) {
            uint64_t t = now_ns();
            if (!got->first) got->second.first = t;
            got->first += in.size();
            got->second.second = t;
            in.drain(in.size());
        });
        c->on_eof([got](Connection &conn) {
            conn.write(std::to_string(got->first) + " " + std::to_string(got->second.second - got->second.first) +
                       "\n");
            conn.close();
        });
    }
};

struct Result {
    std::string test;
    size_t size;
    double mb_s;
    uint64_t ops;
    std::string error; ///< a failed check or transfer
};

/// Runs the phases one after the other on loop 0, then stops the runtime.
class Client {
public:
    Client(Runtime &rt, Server &server, const RmaOptions &o) : rt_(rt), server_(server), o_(o) {}

    void start()
    {
        for (unsigned round = 0; round < o_.rounds; ++round)
            for (size_t size : o_.sizes)
                for (const std::string &test : o_.tests) plan_.push_back({test, size});
        ConnectOptions to(o_.listen, server_.rma_listener->port());
        if (!o_.source.empty()) to.source_address = o_.source;
        rt_.connect(to, [this](const ConnectionPtr &c, const ConnectError &e) {
            if (!c) return fail("connect: " + e.message);
            std::string why;
            if (!c->enable_rma(&why)) return fail("enable_rma: " + why);
            rma_ = c;
            c->read_exactly(1, [this](Connection &conn, std::string n) {
                conn.read_exactly(static_cast<unsigned char>(n[0]), [this](Connection &, std::string d) {
                    desc_ = std::move(d);
                    next();
                });
            });
        });
    }

    std::vector<Result> results;
    std::string failure;

private:
    struct Step {
        std::string test;
        size_t size;
    };

    void fail(const std::string &why)
    {
        if (failure.empty()) failure = why;
        rt_.stop(false);
    }

    void next()
    {
        if (step_ == plan_.size()) return rt_.stop(false);
        const Step &s = plan_[step_++];
        if (s.test == "stream") return run_stream(s.size);
        run_rma(s.test == "rma-read", s.size);
    }

    void run_stream(size_t size)
    {
        ConnectOptions to(o_.listen, server_.stream_listener->port());
        if (!o_.source.empty()) to.source_address = o_.source;
        rt_.connect(to, [this, size](const ConnectionPtr &c, const ConnectError &e) {
            if (!c) return fail("connect: " + e.message);
            auto payload = std::make_shared<std::string>(pattern(1, size));
            uint64_t deadline = now_ns() + static_cast<uint64_t>(o_.duration_s * 1e9);
            // As `local -t throughput` writes: while little is queued, so
            // most writes go straight to the transport; on_drain resumes.
            const size_t high_water = std::max<size_t>(64 * 1024, 2 * size);
            auto pump = std::make_shared<std::function<void(Connection &)>>();
            *pump = [payload, deadline, high_water](Connection &conn) {
                while (conn.is_open() && conn.output_queued() <= high_water) {
                    if (now_ns() >= deadline) return conn.shutdown_write();
                    conn.write(*payload);
                }
            };
            c->on_drain([pump](Connection &conn) { (*pump)(conn); });
            c->read_until("\n", 256, [this, size](Connection &conn, std::string line) {
                unsigned long long bytes = 0, ns = 1;
                sscanf(line.c_str(), "%llu %llu", &bytes, &ns);
                results.push_back({"stream", size, ns ? bytes / (ns / 1e9) / (1 << 20) : 0.0, bytes / size, ""});
                conn.close();
                next();
            });
            (*pump)(*c);
        });
    }

    void run_rma(bool read, size_t size)
    {
        size_ = size;
        // Local buffers the transport lends too (RDMA: no staging copy).
        std::string why;
        locals_ = rma_->rma_memory(size * o_.window, &why);
        if (!locals_) return fail("rma_memory: " + why);
        if (!read)
            for (unsigned k = 0; k < o_.window; ++k) std::memcpy(local(k), pattern(k, size).data(), size);
        expected_.clear();
        if (read)
            for (unsigned k = 0; k < o_.window; ++k) expected_.push_back(pattern(k, size));
        ops_ = bytes_ = 0;
        in_flight_ = 0;
        start_ns_ = last_ns_ = now_ns();
        deadline_ns_ = start_ns_ + static_cast<uint64_t>(o_.duration_s * 1e9);
        read_ = read;
        size_ = size;
        error_.clear();
        for (unsigned k = 0; k < o_.window; ++k) post(k);
    }

    void post(unsigned k)
    {
        const size_t half = server_.region_size / 2;
        const uint64_t offset = (read_ ? 0 : half) + k * server_.slot_size;
        auto done = [this, k](std::error_code status, const std::string &reason) {
            in_flight_--;
            if (status && error_.empty()) error_ = status.message() + ": " + reason;
            if (!status) {
                if (read_ && std::memcmp(local(k), expected_[k].data(), size_) != 0 && error_.empty())
                    error_ = "a read returned other bytes than the exposure holds";
                ops_++;
                bytes_ += size_;
                last_ns_ = now_ns();
            }
            if (error_.empty() && now_ns() < deadline_ns_) return post(k);
            if (in_flight_ == 0) finish_rma();
        };
        std::string why;
        std::error_code ec = read_ ? rma_->rma_read(desc_, offset, local(k), size_, done, &why)
                                   : rma_->rma_write(desc_, offset, local(k), size_, done, &why);
        if (ec) {
            if (error_.empty()) error_ = "not started: " + ec.message() + ": " + why;
            if (in_flight_ == 0) finish_rma();
            return;
        }
        in_flight_++;
    }

    void finish_rma()
    {
        double secs = (last_ns_ - start_ns_) / 1e9;
        Result r{read_ ? "rma-read" : "rma-write", size_, secs > 0 ? bytes_ / secs / (1 << 20) : 0.0, ops_, error_};
        if (read_ || !error_.empty()) {
            results.push_back(r);
            return next();
        }
        rma_->write("CHECK " + std::to_string(size_) + " " + std::to_string(ops_) + "\n");
        rma_->read_until("\n", 256, [this, r](Connection &, std::string line) mutable {
            if (line != "OK\n") r.error = "the server found write slots without the bytes written: " + line;
            results.push_back(r);
            next();
        });
    }

    Runtime &rt_;
    Server &server_;
    const RmaOptions &o_;
    std::vector<Step> plan_;
    size_t step_ = 0;
    ConnectionPtr rma_;
    std::string desc_;
    char *local(unsigned k) const { return locals_->data() + size_t(k) * size_; }

    RmaMemoryPtr locals_;
    std::vector<std::string> expected_;
    bool read_ = false;
    size_t size_ = 0;
    unsigned in_flight_ = 0;
    uint64_t ops_ = 0, bytes_ = 0, start_ns_ = 0, last_ns_ = 0, deadline_ns_ = 0;
    std::string error_;
};

double median(std::vector<double> v)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

} // namespace

int run_rma(const RmaOptions &options)
{
    Runtime rt(make_config(options.runtime));
    rt.start();
    std::fprintf(stderr, "twinwire-bench rma: %s\n", describe_transport(rt).c_str());
    Server server(rt, options, *std::max_element(options.sizes.begin(), options.sizes.end()));
    // Where the RMA side listens: other peers may connect to it too (the
    // memory check in tests/check_rma.sh does).
    std::fprintf(stderr, "twinwire-bench rma: RMA server on %s port %u\n", options.listen.c_str(),
                 static_cast<unsigned>(server.rma_listener->port()));
    Client client(rt, server, options);
    client.start();
    rt.run();
    if (!client.failure.empty()) {
        std::fprintf(stderr, "twinwire-bench rma: %s\n", client.failure.c_str());
        return 1;
    }
    int status = 0;
    std::printf("%-10s %10s %12s %10s\n", "test", "size", "MB/s", "transfers");
    std::map<std::pair<size_t, std::string>, std::vector<double>> by;
    for (const Result &r : client.results) {
        std::printf("%-10s %10zu %12.1f %10llu%s%s\n", r.test.c_str(), r.size, r.mb_s,
                    static_cast<unsigned long long>(r.ops), r.error.empty() ? "" : "  FAILED: ", r.error.c_str());
        if (!r.error.empty()) status = 1;
        by[{r.size, r.test}].push_back(r.mb_s);
    }
    std::printf("\nmedian over %u round(s), and against stream:\n", options.rounds);
    for (size_t size : options.sizes) {
        double stream = median(by[{size, "stream"}]);
        for (const std::string &test : options.tests) {
            double m = median(by[{size, test}]);
            std::printf("%-10s %10zu %12.1f", test.c_str(), size, m);
            if (test != "stream" && stream > 0) std::printf("   %.2fx stream", m / stream);
            std::printf("\n");
        }
    }
    return status;
}

} // namespace twinwire::bench
