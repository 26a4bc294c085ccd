// SPDX-License-Identifier: MIT
// Conformance: one-sided remote memory (docs/rma.md) through the framework
// over the transport under test: correctness, refusals (bounds, mode,
// revoked, another connection's), failure with operations in flight, and
// RMA beside the byte stream.  Every case runs a real runtime over the
// transport; the descriptors go over the stream, as applications send them.
#include "harness.hpp"
#include "needs.hpp"
#include "payload.hpp"

#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <endian.h>

using namespace twinwire;
using namespace twinwire::conformance;

namespace {

std::string hex(const std::string &bytes)
{
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string unhex(const std::string &text)
{
    std::string out;
    for (size_t i = 0; i + 1 < text.size(); i += 2) out += static_cast<char>(std::stoi(text.substr(i, 2), nullptr, 16));
    return out;
}

uint64_t checksum(const char *p, size_t n) { return twinwire::conformance::checksum(std::string_view(p, n)); }

/// A runtime over the transport under test, a listener whose connections
/// enable RMA, and clients that do too; run() drives it on this thread
/// until finish() or the wait limit.
struct Rig {
    Runtime rt;
    std::shared_ptr<Listener> listener;
    std::function<void(const ConnectionPtr &)> on_server;
    std::vector<ConnectionPtr> servers;
    std::vector<std::shared_ptr<void>> keep; ///< handlers that call themselves again
    std::function<std::string()> describe;   ///< where a case stands, said when it times out
    bool server_enables = true;
    bool finished = false;
    bool timed_out = false;

    static Config config()
    {
        transport(); // loaded once by the harness: a failure to load fails here with the reason
        Config c = context().runtime_config();
        c.set("threads", "1");
        c.set("log_level", "warn");
        return c;
    }

    Rig() : rt(config())
    {
        rt.start();
        ListenOptions lo;
        lo.address = host_text(context().server_address());
        lo.port = 0;
        listener = rt.listen(lo, [this](const ConnectionPtr &c) {
            servers.push_back(c);
            if (server_enables) {
                std::string why;
                if (!c->enable_rma(&why)) FAIL("server enable_rma: " << why);
            }
            if (on_server) on_server(c);
        });
    }

    void connect(std::function<void(const ConnectionPtr &)> on_client, bool enable = true)
    {
        ConnectOptions to(host_text(context().server_address()), listener->port());
        if (auto src = context().client_source()) to.source_address = host_text(*src);
        rt.connect(to, [on_client, enable](const ConnectionPtr &c, const ConnectError &error) {
            REQUIRE(c);
            INFO(error.message);
            if (enable) {
                std::string why;
                if (!c->enable_rma(&why)) FAIL("client enable_rma: " << why);
            }
            on_client(c);
        });
    }

    void finish()
    {
        finished = true;
        rt.stop(false);
    }

    void run()
    {
        std::string stalled;
        Timer watchdog(rt.loop(0), [this, &stalled] {
            timed_out = true;
            if (describe) stalled = describe(); // before stop() closes everything
            rt.stop(false);
        });
        watchdog.start(wait_limit());
        rt.run();
        if (timed_out && !stalled.empty()) FAIL("timed out: " << stalled);
        if (timed_out) FAIL("not finished within the wait limit of " << wait_limit().count() << " ms");
        REQUIRE(finished);
    }
};

/// The server side of most cases: expose `memory` with `access`, send its
/// descriptor as a line "D <hex>", then hand each further line to `on_line`.
void serve_exposure(Rig &rig, std::string &memory, RmaAccess access, RmaExposurePtr &exposure,
                    std::function<void(Connection &, const std::string &)> on_line)
{
    rig.on_server = [&rig, &memory, access, &exposure, on_line](const ConnectionPtr &c) {
        std::string why;
        exposure = c->expose(&memory[0], memory.size(), access, &why);
        REQUIRE(exposure);
        REQUIRE(exposure->descriptor().size() <= TW_RMA_DESC_MAX);
        c->write("D " + hex(exposure->descriptor()) + "\n");
        auto next = std::make_shared<std::function<void(Connection &, std::string)>>();
        rig.keep.push_back(next);
        auto *again = next.get();
        *next = [again, on_line](Connection &conn, std::string line) {
            line.pop_back();
            on_line(conn, line);
            if (conn.is_open()) conn.read_until("\n", 4096, *again);
        };
        c->read_until("\n", 4096, *next);
    };
}

/// The client side: the first line is the descriptor.
void with_descriptor(Rig &rig, std::function<void(const ConnectionPtr &, const std::string &)> then)
{
    rig.connect([then](const ConnectionPtr &c) {
        c->read_until("\n", 4096, [then, c](Connection &, std::string line) {
            REQUIRE(line.compare(0, 2, "D ") == 0);
            then(c, unhex(line.substr(2, line.size() - 3)));
        });
    });
}

/// Reads then writes each size in turn at an offset, checking every byte.
void read_write_sizes(const std::vector<size_t> &sizes, size_t exposure_size)
{
    Rig rig;
    std::string memory = make_payload(exposure_size, 7);
    const std::string original = memory;
    RmaExposurePtr exposure;
    std::vector<std::string> failures;
    serve_exposure(rig, memory, RmaAccess::read_write, exposure, [&](Connection &conn, const std::string &line) {
        // "W offset size checksum": the client wrote there; check our memory.
        unsigned long long off = 0, size = 0, sum = 0;
        REQUIRE(sscanf(line.c_str(), "W %llu %llu %llu", &off, &size, &sum) == 3);
        if (checksum(memory.data() + off, size) != sum) failures.push_back("write of " + std::to_string(size) + " B");
        conn.write("OK\n");
    });
    auto local = std::make_shared<std::string>();
    auto steps = std::make_shared<std::function<void(const ConnectionPtr &, const std::string &, size_t)>>();
    auto *step = steps.get(); // owned here, outliving run(): no cycle through the closures
    *step = [&, local, step](const ConnectionPtr &c, const std::string &desc, size_t i) {
        if (i == sizes.size()) return rig.finish();
        size_t size = sizes[i];
        // Each size its own region (odd offsets too), so a write never
        // changes what a later read expects.
        size_t offset = 0;
        for (size_t k = 0; k < i; ++k) offset += sizes[k] + 13;
        local->assign(size, '\0');
        std::string why;
        auto ec = c->rma_read(
            desc, offset, &(*local)[0], size,
            [&, c, desc, i, size, offset, local, step](std::error_code status, const std::string &reason) {
                INFO("read of " << size << " B: " << reason);
                REQUIRE_FALSE(status);
                if (checksum(local->data(), size) != checksum(original.data() + offset, size))
                    failures.push_back("read of " + std::to_string(size) + " B");
                *local = make_payload(size, 100 + static_cast<unsigned>(i));
                std::string why2;
                auto ec2 = c->rma_write(
                    desc, offset, local->data(), size,
                    [&, c, desc, i, size, offset, local, step](std::error_code st, const std::string &r) {
                        INFO("write of " << size << " B: " << r);
                        REQUIRE_FALSE(st);
                        // The write is there: say so on the stream (rule 4).
                        c->write("W " + std::to_string(offset) + " " + std::to_string(size) + " " +
                                 std::to_string(checksum(local->data(), size)) + "\n");
                        c->read_until("\n", 64,
                                      [c, desc, i, step](Connection &, std::string) { (*step)(c, desc, i + 1); });
                    },
                    &why2);
                INFO(why2);
                REQUIRE_FALSE(ec2);
            },
            &why);
        INFO(why);
        REQUIRE_FALSE(ec);
    };
    with_descriptor(rig, [step](const ConnectionPtr &c, const std::string &desc) { (*step)(c, desc, 0); });
    rig.run();
    for (const auto &f : failures) UNSCOPED_INFO("checksum mismatch: " << f);
    CHECK(failures.empty());
}

/// The descriptor with its length and access replaced, as a forging peer
/// would (the emulation's layout: docs/rma.md); the initiator's own checks
/// no longer stop it, so the exposing side must.
std::string forged(std::string desc, uint64_t len, uint32_t access)
{
    REQUIRE(desc.size() == 36);
    len = htole64(len);
    access = htole32(access);
    std::memcpy(&desc[20], &len, 8);
    std::memcpy(&desc[28], &access, 4);
    return desc;
}

} // namespace

TEST_CASE("RMA reads and writes of 1 B, 4 KiB and 1 MiB move every byte, checked on both sides", "[rma][data]")
{
    read_write_sizes({1, 4096, 1u << 20}, (1u << 20) + 4096 + 1 + 3 * 13);
}

TEST_CASE("RMA reads and writes of 64 MiB move every byte, checked on both sides", "[rma]")
{
    read_write_sizes({64u << 20}, 64u << 20);
}

TEST_CASE("RMA accesses out of bounds or of a mode not exposed are refused and touch nothing", "[rma]")
{
    Rig rig;
    std::string memory = make_payload(4096, 3);
    const std::string original = memory;
    RmaExposurePtr exposure;
    serve_exposure(rig, memory, RmaAccess::read, exposure, [&](Connection &conn, const std::string &) {
        conn.write(memory == original ? "SAME\n" : "CHANGED\n");
    });
    std::vector<std::string> seen;
    auto local = std::make_shared<std::string>(8192, 'x');
    with_descriptor(rig, [&, local](const ConnectionPtr &c, const std::string &desc) {
        std::string why;
        // The initiator refuses what the descriptor itself rules out.
        CHECK(c->rma_read(
                  desc, 4000, &(*local)[0], 200, [](std::error_code, const std::string &) {}, &why) ==
              std::errc::invalid_argument);
        CHECK(c->rma_write(
                  desc, 0, local->data(), 16, [](std::error_code, const std::string &) {}, &why) ==
              errc::remote_access_refused);
        CHECK(c->rma_read(
                  desc, 0, &(*local)[0], 0, [](std::error_code, const std::string &) {}, &why) ==
              std::errc::invalid_argument);
        CHECK(c->rma_read(
                  "not a descriptor", 0, &(*local)[0], 1, [](std::error_code, const std::string &) {}, &why) ==
              std::errc::invalid_argument);
        if (c->rma_native()) {
            // A native descriptor is the transport's own: tests/rdma forges
            // RDMA's and shows the device refusing them.
            seen.assign(2, "native");
            c->write("CHECK\n");
            c->read_until("\n", 64, [&](Connection &, std::string line) {
                CHECK(line == "SAME\n");
                rig.finish();
            });
            return;
        }
        // A forged descriptor gets past it: the exposing side refuses.
        std::string big = forged(desc, 8192, TW_RMA_READ | TW_RMA_WRITE);
        CHECK_FALSE(
            c->rma_read(big, 4000, &(*local)[0], 200, [&, c, big, local](std::error_code st, const std::string &r) {
                seen.push_back("read past end: " + st.message() + ": " + r);
                CHECK(st == errc::remote_access_refused);
                CHECK(r.find("outside the exposure") != std::string::npos);
                CHECK(c->rma_write(big, 0, local->data(), 4096, [&, c](std::error_code st2, const std::string &r2) {
                    seen.push_back("write to read-only: " + st2.message() + ": " + r2);
                    CHECK(st2 == errc::remote_access_refused);
                    CHECK(r2.find("does not allow writing") != std::string::npos);
                    c->write("CHECK\n");
                    c->read_until("\n", 64, [&](Connection &, std::string line) {
                        CHECK(line == "SAME\n");
                        rig.finish();
                    });
                }) == std::error_code());
            }));
    });
    rig.run();
    CHECK(seen.size() == 2);
    CHECK(memory == original);
}

/// One access of a sequence: its mode, range, and whether the exposing side
/// must serve it.
struct Access {
    bool write;
    uint64_t offset, len;
    bool served;
};

/// Runs `accesses` one after the other with `desc` on `c`, each checked,
/// then asks the server ("C <checksum>") whether its memory is `expected`
/// (the served writes applied) and finishes.
void run_accesses(Rig &rig, const ConnectionPtr &c, const std::string &desc, std::vector<Access> accesses,
                  std::shared_ptr<std::string> expected, std::vector<std::string> &seen)
{
    auto step = std::make_shared<std::function<void(size_t)>>();
    rig.keep.push_back(step);
    auto *next = step.get();
    auto local = std::make_shared<std::string>(8192, 'L');
    *next = [&rig, &seen, c, desc, accesses, expected, local, next](size_t i) {
        if (i == accesses.size()) {
            c->write("C " + std::to_string(checksum(expected->data(), expected->size())) + "\n");
            c->read_until("\n", 64, [&rig](Connection &, std::string line) {
                CHECK(line == "SAME\n");
                rig.finish();
            });
            return;
        }
        const Access a = accesses[i];
        std::string what = std::string(a.write ? "write" : "read") + " of " + std::to_string(a.len) + " at " +
                           std::to_string(a.offset);
        auto done = [&seen, a, what, expected, local, next, i](std::error_code st, const std::string &r) {
            seen.push_back(what + ": " + (st ? r : "served"));
            INFO(what << ": " << r);
            if (a.served) {
                CHECK_FALSE(st);
                if (!st && a.write) expected->replace(a.offset, a.len, local->substr(0, a.len));
            } else {
                CHECK(st == errc::remote_access_refused);
            }
            (*next)(i + 1);
        };
        std::string why;
        std::error_code ec = a.write ? c->rma_write(desc, a.offset, local->data(), a.len, done, &why)
                                     : c->rma_read(desc, a.offset, &(*local)[0], a.len, done, &why);
        INFO(what << ": " << why);
        REQUIRE_FALSE(ec);
    };
    (*next)(0);
}

/// The server's side: "C <checksum>" lines answered SAME or CHANGED.
std::function<void(Connection &, const std::string &)> compare_memory(const std::string &memory)
{
    return [&memory](Connection &conn, const std::string &line) {
        unsigned long long sum = 0;
        REQUIRE(sscanf(line.c_str(), "C %llu", &sum) == 1);
        conn.write(checksum(memory.data(), memory.size()) == sum ? "SAME\n" : "CHANGED\n");
    };
}

TEST_CASE("the exposing side serves accesses that end exactly at the exposure's end and refuses one byte more "
          "(forged length), offsets near 2^64 included",
          "[rma]")
{
    Rig rig;
    std::string memory = make_payload(4096, 12);
    auto expected = std::make_shared<std::string>(memory);
    RmaExposurePtr exposure;
    serve_exposure(rig, memory, RmaAccess::read_write, exposure, compare_memory(memory));
    std::vector<std::string> seen;
    with_descriptor(rig, [&](const ConnectionPtr &c, const std::string &desc) {
        if (c->rma_native()) {
            seen.push_back("native: tests/rdma forges RDMA's descriptors");
            return rig.finish();
        }
        // The initiator's checks pass everything below 2^64: the exposing side decides.
        std::string big = forged(desc, UINT64_MAX, TW_RMA_READ | TW_RMA_WRITE);
        const uint64_t max = UINT64_MAX;
        run_accesses(rig, c, big,
                     {{false, 0, 4096, true},
                      {false, 0, 4097, false},
                      {false, 4095, 1, true},
                      {false, 4095, 2, false},
                      {false, 4096, 1, false},
                      {true, 4096 - 16, 16, true},
                      {true, 4096 - 15, 16, false},
                      {true, 4095, 1, true},
                      {true, 4096, 1, false},
                      {true, 0, 4096, true},
                      {true, 1, 4096, false},
                      {false, max - 4096, 4096, false},
                      {true, max - 16, 16, false},
                      {false, max - 1, 1, false},
                      {false, 4096, max - 4096, false}},
                     expected, seen);
    });
    rig.run();
    for (const auto &s : seen) UNSCOPED_INFO(s);
    // Natively the first refused access ends the connection (RC), so one line says so.
    const bool native = seen.size() == 1 && seen[0].rfind("native", 0) == 0;
    CHECK((native || seen.size() >= 15));
}

TEST_CASE("a key forged for an exposure of the same connection is refused, reads and writes, and touches nothing",
          "[rma]")
{
    Rig rig;
    std::string shared = make_payload(4096, 13), secret = make_payload(4096, 14);
    const std::string secret_before = secret;
    auto expected = std::make_shared<std::string>(shared);
    RmaExposurePtr exposure, hidden;
    serve_exposure(rig, shared, RmaAccess::read_write, exposure, compare_memory(shared));
    // Exposed first and never sent: its id is the sent one's minus one.
    auto send_shared = rig.on_server;
    rig.on_server = [&, send_shared](const ConnectionPtr &c) {
        hidden = c->expose(&secret[0], secret.size(), RmaAccess::read_write);
        REQUIRE(hidden);
        send_shared(c);
    };
    std::vector<std::string> seen;
    with_descriptor(rig, [&](const ConnectionPtr &c, const std::string &desc) {
        if (c->rma_native()) {
            seen.push_back("native: tests/rdma forges RDMA's descriptors");
            return rig.finish();
        }
        uint64_t id = 0, key = 0;
        std::memcpy(&id, &desc[4], 8);
        std::memcpy(&key, &desc[12], 8);
        id = le64toh(id);
        key = le64toh(key);
        auto with = [&desc](uint64_t new_id, uint64_t new_key) {
            std::string d = desc;
            new_id = htole64(new_id);
            new_key = htole64(new_key);
            std::memcpy(&d[4], &new_id, 8);
            std::memcpy(&d[12], &new_key, 8);
            return d;
        };
        // The sent exposure's own id with a wrong key, then the hidden
        // one's id with the known key, and with a guessed one.
        std::vector<std::string> forgeries = {with(id, key ^ 1), with(id, 0), with(id - 1, key), with(id - 1, key + 1)};
        auto steps = std::make_shared<std::function<void(size_t)>>();
        rig.keep.push_back(steps);
        auto *next = steps.get();
        auto local = std::make_shared<std::string>(4096, 'F');
        *next = [&, c, desc, forgeries, next, local](size_t i) {
            if (i == forgeries.size()) {
                // The true descriptor still works: the refusals were the key's.
                return run_accesses(rig, c, desc, {{true, 0, 64, true}}, expected, seen);
            }
            auto d = forgeries[i];
            REQUIRE_FALSE(c->rma_read(
                d, 0, &(*local)[0], 64, [&, c, d, i, next, local](std::error_code st, const std::string &r) {
                    seen.push_back("read: " + r);
                    CHECK(st == errc::remote_access_refused);
                    CHECK(r.find("no such exposure") != std::string::npos);
                    CHECK(*local == std::string(4096, 'F'));
                    REQUIRE_FALSE(c->rma_write(d, 0, local->data(), 4096,
                                               [&, i, next](std::error_code st2, const std::string &r2) {
                                                   seen.push_back("write: " + r2);
                                                   CHECK(st2 == errc::remote_access_refused);
                                                   (*next)(i + 1);
                                               }));
                }));
        };
        (*next)(0);
    });
    rig.run();
    for (const auto &s : seen) UNSCOPED_INFO(s);
    CHECK(secret == secret_before);
    CHECK((seen.size() == 1 || seen.size() == 9));
}

TEST_CASE("RMA after revoke is refused, revoke's callback runs later, and a write then changes nothing "
          "(native RDMA: the refused access ends the connection, as RC does)",
          "[rma]")
{
    Rig rig;
    std::string memory = make_payload(65536, 5);
    RmaExposurePtr exposure;
    bool revoke_done = false;
    // Here, not in the handler: the callback reads it after the handler returned.
    bool inside_revoke = false;
    std::string after_revoke;
    serve_exposure(rig, memory, RmaAccess::read_write, exposure, [&](Connection &conn, const std::string &line) {
        if (line == "REVOKE") {
            inside_revoke = true;
            CHECK(exposure->revoke([&] {
                CHECK_FALSE(inside_revoke); // never from inside revoke()
                revoke_done = true;
                after_revoke = memory;
                conn.write("REVOKED\n");
            }));
            inside_revoke = false;
            CHECK_FALSE(exposure->active());
            CHECK_FALSE(exposure->revoke()); // once
        } else {
            conn.write(memory == after_revoke ? "SAME\n" : "CHANGED\n");
        }
    });
    auto local = std::make_shared<std::string>(65536, 'z');
    with_descriptor(rig, [&, local](const ConnectionPtr &c, const std::string &desc) {
        REQUIRE_FALSE(
            c->rma_read(desc, 0, &(*local)[0], 4096, [&, c, desc, local](std::error_code st, const std::string &) {
                REQUIRE_FALSE(st);
                c->write("REVOKE\n");
                c->read_until("\n", 64, [&, c, desc, local](Connection &, std::string line) {
                    REQUIRE(line == "REVOKED\n");
                    REQUIRE_FALSE(c->rma_read(
                        desc, 0, &(*local)[0], 4096, [&, c, desc, local](std::error_code st2, const std::string &r2) {
                            CHECK(st2 == errc::remote_access_refused);
                            INFO(r2);
                            // Native RDMA: a refused access ends an RC connection;
                            // the memory check below is done in this process.
                            if (c->rma_native()) return rig.finish();
                            REQUIRE_FALSE(c->rma_write(desc, 0, local->data(), 65536,
                                                       [&, c](std::error_code st3, const std::string &) {
                                                           CHECK(st3 == errc::remote_access_refused);
                                                           c->write("CHECK\n");
                                                           c->read_until("\n", 64, [&](Connection &, std::string l) {
                                                               CHECK(l == "SAME\n");
                                                               rig.finish();
                                                           });
                                                       }));
                        }));
                });
            }));
    });
    rig.run();
    CHECK(revoke_done);
    CHECK(memory == after_revoke);
}

TEST_CASE("a descriptor is refused on another connection, and after its own connection closed", "[rma]")
{
    Rig rig;
    std::string memory = make_payload(4096, 9);
    RmaExposurePtr exposure;
    int served = 0;
    rig.on_server = [&](const ConnectionPtr &c) {
        if (served++ == 0) {
            exposure = c->expose(&memory[0], memory.size(), RmaAccess::read_write);
            REQUIRE(exposure);
            c->write("D " + hex(exposure->descriptor()) + "\n");
            c->read_until("\n", 64, [](Connection &conn, std::string) { conn.close(); }); // "CLOSE"
        }
    };
    auto local = std::make_shared<std::string>(4096, 'q');
    with_descriptor(rig, [&, local](const ConnectionPtr &first, const std::string &desc) {
        // A second connection to the same server: the descriptor is not its.
        rig.connect([&, first, desc, local](const ConnectionPtr &second) {
            REQUIRE_FALSE(second->rma_read(
                desc, 0, &(*local)[0], 16, [&, first, desc, local](std::error_code st, const std::string &r) {
                    CHECK(st == errc::remote_access_refused);
                    CHECK(r.find("another connection") != std::string::npos);
                    // Now close the first connection; its descriptor dies with it.
                    first->on_close([&, first, desc, local](Connection &, const CloseInfo &) {
                        std::string why;
                        CHECK(first->rma_read(
                                  desc, 0, &(*local)[0], 16,
                                  [](std::error_code, const std::string &) {
                                      FAIL("a read on a closed connection started");
                                  },
                                  &why) == errc::closed_locally);
                        rig.finish();
                    });
                    first->write("CLOSE\n");
                }));
        });
    });
    rig.run();
    CHECK_FALSE(exposure->active());
}

TEST_CASE("operations in flight when the peer dies complete once, with the connection's error", "[rma]")
{
    Rig rig;
    std::string memory = make_payload(16u << 20, 1);
    RmaExposurePtr exposure;
    serve_exposure(rig, memory, RmaAccess::read_write, exposure, [&](Connection &conn, const std::string &) {
        conn.abort(); // dies with the client's transfers in flight
    });
    auto local = std::make_shared<std::string>(16u << 20, '\0');
    int reads = 0, writes = 0;
    std::error_code read_status, write_status;
    with_descriptor(rig, [&, local](const ConnectionPtr &c, const std::string &desc) {
        c->on_close([&](Connection &, const CloseInfo &) {
            CHECK(reads == 1);
            CHECK(writes == 1);
            rig.finish();
        });
        REQUIRE_FALSE(c->rma_read(desc, 0, &(*local)[0], local->size(), [&](std::error_code st, const std::string &) {
            reads++;
            read_status = st;
        }));
        REQUIRE_FALSE(c->rma_write(desc, 0, local->data(), local->size(), [&](std::error_code st, const std::string &) {
            writes++;
            write_status = st;
        }));
        c->write("DIE\n");
        rig.describe = [&, c] {
            std::string s = std::string(c->is_open() ? "client open" : "client CLOSED") + ", " +
                            std::to_string(c->output_queued()) + " B queued, sent " +
                            std::to_string(c->stats().bytes_sent) + "; ";
            for (auto &k : rig.servers)
                s += std::string(k->is_open() ? "server open" : "server CLOSED") + ", received " +
                     std::to_string(k->stats().bytes_received) + "; ";
            return s + "reads " + std::to_string(reads) + " writes " + std::to_string(writes);
        };
    });
    rig.run();
    CHECK(reads == 1);
    CHECK(writes == 1);
    CHECK(read_status);
    CHECK(write_status);
}

TEST_CASE("RMA beside the byte stream on the same connection: a 16 MiB write and 20000 stream lines arrive intact",
          "[rma][data]")
{
    Rig rig;
    std::string memory(16u << 20, '\0');
    RmaExposurePtr exposure;
    const int lines = 20000;
    // The server echoes every stream line while the client's write lands.
    serve_exposure(rig, memory, RmaAccess::write, exposure, [&](Connection &conn, const std::string &line) {
        if (line == "WRITTEN") conn.write("SUM " + std::to_string(checksum(memory.data(), memory.size())) + "\n");
        else conn.write("E " + line + "\n");
    });
    auto local = std::make_shared<std::string>(make_payload(16u << 20, 77));
    int echoed = 0, wrong = 0;
    bool written = false;
    with_descriptor(rig, [&, local](const ConnectionPtr &c, const std::string &desc) {
        auto lines_in = std::make_shared<std::function<void(Connection &, std::string)>>();
        rig.keep.push_back(lines_in);
        auto *again = lines_in.get();
        *again = [&, again, local](Connection &conn, std::string line) {
            if (line.compare(0, 4, "SUM ") == 0) {
                CHECK(line == "SUM " + std::to_string(checksum(local->data(), local->size())) + "\n");
                return rig.finish();
            }
            std::string want = "E S " + std::to_string(echoed) + " " + hex(make_payload(24, echoed)) + "\n";
            wrong += line != want;
            if (++echoed == lines && written) conn.write("WRITTEN\n");
            conn.read_until("\n", 4096, *again);
        };
        c->read_until("\n", 4096, *again);
        auto closes = std::make_shared<std::string>();
        rig.keep.push_back(closes);
        auto note_close = [closes](const char *who) {
            return [closes, who](Connection &, const CloseInfo &info) {
                *closes += std::string(who) + " closed: " + info.reason + " (" + info.code.message() + "); ";
            };
        };
        c->on_close(note_close("client"));
        for (auto &k : rig.servers) k->on_close(note_close("server"));
        rig.describe = [&, c, closes] {
            auto side = [](const char *who, const Connection &k) {
                tw_conn_stats st = k.stats();
                return std::string(who) + (k.is_open() ? " open" : " CLOSED") + ": sent " +
                       std::to_string(st.bytes_sent) + " received " + std::to_string(st.bytes_received) + " queued " +
                       std::to_string(k.output_queued()) + " would_block " + std::to_string(st.write_would_block) +
                       "; ";
            };
            std::string s = side("client", *c);
            for (auto &k : rig.servers) s += side("server", *k);
            return s + *closes + "echoed " + std::to_string(echoed) + " of " + std::to_string(lines) +
                   (written ? ", written" : ", write pending");
        };
        REQUIRE_FALSE(
            c->rma_write(desc, 0, local->data(), local->size(), [&, c](std::error_code st, const std::string &r) {
                INFO(r);
                REQUIRE_FALSE(st);
                written = true;
                if (echoed == lines) c->write("WRITTEN\n");
            }));
        for (int i = 0; i < lines; ++i) c->write("S " + std::to_string(i) + " " + hex(make_payload(24, i)) + "\n");
    });
    rig.run();
    CHECK(echoed == lines);
    CHECK(wrong == 0);
    CHECK(written);
}

TEST_CASE("revoke while a read is in flight cuts the read off with a remote access error", "[rma]")
{
    Rig rig;
    std::string memory = make_payload(64u << 20, 4);
    RmaExposurePtr exposure;
    bool revoked = false;
    serve_exposure(rig, memory, RmaAccess::read, exposure, [&](Connection &, const std::string &line) {
        if (line == "REVOKE") exposure->revoke([&] { revoked = true; });
    });
    auto local = std::make_shared<std::string>(64u << 20, '\0');
    with_descriptor(rig, [&, local](const ConnectionPtr &c, const std::string &desc) {
        REQUIRE_FALSE(
            c->rma_read(desc, 0, &(*local)[0], local->size(), [&, c](std::error_code st, const std::string &r) {
                INFO(r);
                if (c->rma_native()) {
                    // The window is gone under the read: the device fails it, and
                    // the RC connection with it (its error, or the access error).
                    CHECK(st);
                } else {
                    CHECK(st == errc::remote_access_refused);
                    CHECK(r.find("revoked") != std::string::npos);
                }
                rig.finish();
            }));
        c->write("REVOKE\n"); // right behind the read request on the same stream
    });
    rig.run();
    CHECK(revoked);
}

TEST_CASE("with RMA on, writes queued behind a peer that does not read wait for TW_EV_WRITE instead of calling "
          "the transport each time",
          "[rma]")
{
    // Found in the guest: every write of an RMA connection handed the whole
    // queue to the transport again, so 20000 lines queued behind a busy
    // peer cost 20000 blocked writes (and fault's staging copies of them).
    Rig rig;
    rig.on_server = [](const ConnectionPtr &c) { c->pause_reading(); };
    uint64_t before = 0, after = 0;
    size_t queued = 0;
    bool blocked = false;
    rig.connect([&](const ConnectionPtr &c) {
        // More than any of our transports buffers (TCP autotunes to a few MiB).
        std::string big = make_payload(32u << 20, 11);
        REQUIRE(c->write(big.data(), big.size()));
        blocked = c->output_queued() > 0;
        before = c->stats().write_would_block;
        for (int i = 0; i < 20000; ++i) REQUIRE(c->write("L " + std::to_string(i) + "\n"));
        after = c->stats().write_would_block;
        queued = c->output_queued();
        rig.finish();
    });
    rig.run();
    REQUIRE(blocked); // else the case proves nothing: the transport took 32 MiB
    INFO("blocked writes: " << before << " before the 20000 lines, " << after << " after; " << queued << " B queued");
    CHECK(after - before < 100);
}

TEST_CASE("RMA enabled on one end only ends the connection there with a clear protocol error", "[rma]")
{
    // Only the emulation frames the stream; a native transport has nothing to mismatch.
    CONFORMANCE_NEEDS(TW_NEED_NO_CAP(TW_CAP_RMA));
    Rig rig;
    rig.server_enables = false;
    rig.on_server = [](const ConnectionPtr &c) { c->write("hello, raw stream\n"); };
    CloseInfo info;
    rig.connect([&](const ConnectionPtr &c) {
        c->on_close([&](Connection &, const CloseInfo &i) {
            info = i;
            rig.finish();
        });
    });
    rig.run();
    CHECK(info.code == errc::protocol_mismatch);
    CHECK(info.reason.find("did not enable RMA") != std::string::npos);
}

TEST_CASE("memory the transport lends (rma_memory) is exposed and used as the local buffer of reads and writes",
          "[rma][data]")
{
    Rig rig;
    RmaExposurePtr exposure;
    RmaMemoryPtr served;
    std::string check;
    const std::string pattern = make_payload(1u << 20, 31), written = make_payload(1u << 20, 32);
    rig.on_server = [&](const ConnectionPtr &c) {
        std::string why;
        served = c->rma_memory(pattern.size(), &why);
        INFO(why);
        REQUIRE(served);
        std::memcpy(served->data(), pattern.data(), pattern.size());
        exposure = c->expose(served->data(), served->size(), RmaAccess::read_write, &why);
        REQUIRE(exposure);
        c->write("D " + hex(exposure->descriptor()) + "\n");
        c->read_until("\n", 64, [&](Connection &conn, std::string) { // "CHECK": the client wrote
            check = std::string(served->data(), served->size());
            conn.write("OK\n");
        });
    };
    RmaMemoryPtr local;
    with_descriptor(rig, [&](const ConnectionPtr &c, const std::string &desc) {
        local = c->rma_memory(pattern.size());
        REQUIRE(local);
        CHECK(local->lent() == c->rma_native()); // RDMA lends registered memory; the emulation uses the heap
        REQUIRE_FALSE(
            c->rma_read(desc, 0, local->data(), local->size(), [&, c, desc](std::error_code st, const std::string &r) {
                INFO(r);
                REQUIRE_FALSE(st);
                CHECK(std::memcmp(local->data(), pattern.data(), pattern.size()) == 0);
                std::memcpy(local->data(), written.data(), written.size());
                REQUIRE_FALSE(c->rma_write(
                    desc, 0, local->data(), local->size(), [&, c](std::error_code st2, const std::string &) {
                        REQUIRE_FALSE(st2);
                        c->write("CHECK\n");
                        c->read_until("\n", 64, [&](Connection &, std::string) { rig.finish(); });
                    }));
            }));
    });
    rig.run();
    CHECK(check == written);
}
