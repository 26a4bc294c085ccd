// SPDX-License-Identifier: MIT
// The ABI grows both ways: a plugin built against a later 1.x header (extra
// trailing members in every table) loads and carries a connection; the
// in-tree TCP plugin and that plugin run on a host table cut to ABI 1.0; a
// table below 1.0 is refused with the reason; the params structs and tw_buf
// are read only as far as their size says; private ctrl ops stay in their
// transport's namespace; a host service that fails inside hands the plugin
// an error, never a C++ exception.  Real plugin files, real libevent loop,
// real sockets.
#include "env_path.hpp"
#include "log_capture.hpp"
#include "plugins/future_plugin.h"

#include <twinwire/loop.hpp>
#include <twinwire/runtime.hpp>
#include <twinwire/transport.hpp>

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>
#include <cstring>
#include <new>

using namespace twinwire;
using namespace std::chrono_literals;

// Allocation failure on demand, for the host-service test: the next N-th
// operator new on this thread throws std::bad_alloc.  Replacing the global
// operator new in the executable replaces it for libtwinwire.so too.
namespace {
thread_local int g_fail_alloc_in = 0;
}
// Every plain form is replaced, so that all of them (and a sanitizer's
// own) agree on malloc/free.
namespace {
void *allocate(std::size_t n) noexcept
{
    if (g_fail_alloc_in > 0 && --g_fail_alloc_in == 0) return nullptr;
    return std::malloc(n ? n : 1);
}
void *allocate_or_throw(std::size_t n)
{
    if (void *p = allocate(n)) return p;
    throw std::bad_alloc();
}
} // namespace
void *operator new(std::size_t n) { return allocate_or_throw(n); }
void *operator new[](std::size_t n) { return allocate_or_throw(n); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return allocate(n); }
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return allocate(n); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }

namespace {

// The transport keeps a pointer to its config: one that outlives them all.
const Config &no_settings()
{
    static const Config config;
    return config;
}

std::unique_ptr<Transport> load(const char *env, const Config &config, uint32_t host_table_size, std::string *why)
{
    PluginLoadReport report;
    auto lib = PluginLibrary::open_file(env_path(env), &report);
    INFO(report.reason);
    REQUIRE(lib);
    return Transport::from_plugin(std::move(lib), config, why, host_table_size);
}

// One connection through a transport on one real loop: listen, connect,
// accept, both sides report TW_EV_CONNECTED, bytes cross.
struct Link {
    Transport &t;
    Loop loop;
    tw_transport_loop *tloop = nullptr;
    tw_listener *listener = nullptr;
    tw_conn *client = nullptr;
    tw_conn *server = nullptr;
    bool client_up = false, server_up = false;
    std::string received;

    explicit Link(Transport &transport) : t(transport) { tloop = t.attach(loop); }
    ~Link()
    {
        if (client) t.ops().close(client);
        if (server) t.ops().close(server);
        if (listener) t.ops().listener_close(listener);
        t.detach(loop);
    }

    static void on_incoming(tw_listener *l, void *arg)
    {
        auto *self = static_cast<Link *>(arg);
        tw_conn *c = nullptr;
        if (self->server || self->t.ops().accept(l, self->tloop, &c) != 0) return;
        self->server = c;
        // The host's set_callback comes after the transport's own tasks.
        self->loop.post([self] { self->t.ops().set_callback(self->server, on_server, self); });
    }
    static void on_client(tw_conn *, uint32_t events, void *arg)
    {
        if (events & TW_EV_CONNECTED) static_cast<Link *>(arg)->client_up = true;
    }
    static void on_server(tw_conn *c, uint32_t events, void *arg)
    {
        auto *self = static_cast<Link *>(arg);
        if (events & TW_EV_CONNECTED) self->server_up = true;
        char buf[256];
        ssize_t n;
        while ((events & TW_EV_READ) && (n = self->t.ops().read(c, buf, sizeof buf)) > 0)
            self->received.append(buf, static_cast<size_t>(n));
    }

    // listen and connect with the params structs as large as `params_size`
    // says (the host's own size by default).
    void connect(uint32_t params_size = 0)
    {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        struct {
            tw_listen_params p;
            uint64_t later[2];
        } lp{};
        lp.p.size = params_size ? params_size : sizeof lp.p;
        lp.p.addr = reinterpret_cast<sockaddr *>(&addr);
        lp.p.addrlen = sizeof addr;
        lp.p.on_incoming = on_incoming;
        lp.p.arg = this;
        REQUIRE(t.ops().listen(tloop, &lp.p, &listener) == 0);
        sockaddr_in bound{};
        uint32_t len = sizeof bound;
        REQUIRE(t.ops().listener_addr(listener, reinterpret_cast<sockaddr *>(&bound), &len) == 0);

        struct {
            tw_connect_params p;
            uint64_t later[2];
        } cp{};
        cp.p.size = params_size ? params_size : sizeof cp.p;
        cp.p.addr = reinterpret_cast<sockaddr *>(&bound);
        cp.p.addrlen = sizeof bound;
        REQUIRE(t.ops().connect(tloop, &cp.p, &client) == 0);
        REQUIRE(t.ops().set_callback(client, on_client, this) == 0);
        REQUIRE(loop.run_until([&] { return client_up && server_up; }, 5000ms));
    }

    void send_and_receive(const std::string &text)
    {
        REQUIRE(t.ops().write(client, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
        REQUIRE(loop.run_until([&] { return received.size() >= text.size(); }, 5000ms));
        CHECK(received == text);
    }
};

future_observed observed(Transport &t)
{
    future_observed seen{};
    REQUIRE(t.ops().ctrl(t.handle(), nullptr, FUTURE_NAME, FUTURE_CTRL_OBSERVED, &seen, sizeof seen) == 0);
    return seen;
}

} // namespace

TEST_CASE("a plugin built against a later 1.x header loads, and its extra table members are ignored", "[growth]")
{
    PluginLoadReport report;
    auto lib = PluginLibrary::open_file(env_path("TW_TEST_PLUGIN_FUTURE"), &report);
    INFO(report.reason);
    REQUIRE(lib);
    CHECK(report.abi_major == TW_ABI_MAJOR);
    CHECK(report.abi_minor == TW_ABI_MINOR + 1);
    // Its vtable and info are larger than this host's, and accepted as they are.
    CHECK(lib->info().size > sizeof(tw_plugin_info));
    CHECK(lib->info().ops->size > sizeof(tw_transport_ops));
    CHECK(lib->ops().size == sizeof(tw_transport_ops));
    CHECK(std::string(lib->ops().name) == FUTURE_NAME);
}

TEST_CASE("a plugin built against a later 1.x header carries a connection on this host", "[growth]")
{
    std::string why;
    auto t = load("TW_TEST_PLUGIN_FUTURE", no_settings(), 0, &why);
    INFO(why);
    REQUIRE(t);
    Link link(*t);
    link.connect();
    link.send_and_receive("from a plugin of a later minor");

    // It read the members this host has and found the later ones absent.
    future_observed seen = observed(*t);
    CHECK(seen.host_size == sizeof(tw_host));
    CHECK(seen.host_has_vlog == 1);
    CHECK(seen.host_has_future_service == 0);
    CHECK(seen.listen_params_size == sizeof(tw_listen_params));
    CHECK(seen.listen_has_future_field == 0);
    CHECK(seen.connect_params_size == sizeof(tw_connect_params));
    CHECK(seen.connect_has_future_field == 0);
}

TEST_CASE("a plugin built against a later 1.x header runs on a host table cut to ABI 1.0", "[growth]")
{
    std::string why;
    auto t = load("TW_TEST_PLUGIN_FUTURE", no_settings(), TW_HOST_SIZE_V1, &why);
    INFO(why);
    REQUIRE(t);
    Link link(*t);
    link.connect();
    link.send_and_receive("on a 1.0 host");
    future_observed seen = observed(*t);
    CHECK(seen.host_size == TW_HOST_SIZE_V1);
    CHECK(seen.host_has_vlog == 0); // appended in 1.1: not there, and not called
    CHECK(seen.host_has_future_service == 0);
}

TEST_CASE("the in-tree TCP plugin carries a connection on a host table cut to ABI 1.0", "[growth]")
{
    LogCapture logs;
    std::string why;
    auto t = load("TW_TEST_TCP_MODULE", no_settings(), TW_HOST_SIZE_V1, &why);
    INFO(why);
    REQUIRE(t);
    Link link(*t);
    link.connect();
    link.send_and_receive("tcp on a 1.0 host");
}

TEST_CASE("a host table smaller than ABI 1.0's is refused by the TCP plugin, naming both sizes", "[growth]")
{
    std::string why;
    auto t = load("TW_TEST_TCP_MODULE", no_settings(), TW_HOST_SIZE_V1 - 8, &why);
    CHECK(!t);
    CHECK(why.find("host services table is " + std::to_string(TW_HOST_SIZE_V1 - 8) + " bytes") != std::string::npos);
    CHECK(why.find("at least the " + std::to_string(TW_HOST_SIZE_V1) + " of ABI 1.0") != std::string::npos);
}

TEST_CASE("params structs of the 1.0 size or larger are served; smaller ones are refused", "[growth]")
{
    std::string why;
    auto t = load("TW_TEST_PLUGIN_FUTURE", no_settings(), 0, &why);
    REQUIRE(t);
    {
        // A caller built against a later header: bytes past what the plugin knows are ignored.
        Link link(*t);
        link.connect(sizeof(tw_listen_params) + 16);
        link.send_and_receive("a larger caller");
        future_observed seen = observed(*t);
        CHECK(seen.listen_has_future_field == 1); // the future plugin knows one more member
        CHECK(seen.connect_has_future_field == 1);
    }
    Link link(*t);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    tw_listen_params lp{};
    lp.size = TW_LISTEN_PARAMS_SIZE_V1 - 8;
    lp.addr = reinterpret_cast<sockaddr *>(&addr);
    lp.addrlen = sizeof addr;
    lp.on_incoming = Link::on_incoming;
    tw_listener *l = nullptr;
    CHECK(t->ops().listen(link.tloop, &lp, &l) == -EINVAL);
    tw_connect_params cp{};
    cp.size = TW_CONNECT_PARAMS_SIZE_V1 - 8;
    cp.addr = reinterpret_cast<sockaddr *>(&addr);
    cp.addrlen = sizeof addr;
    tw_conn *c = nullptr;
    CHECK(t->ops().connect(link.tloop, &cp, &c) == -EINVAL);
}

TEST_CASE("tw_buf: the transport fills only what the caller's size covers and refuses less than 1.0", "[growth]")
{
    std::string why;
    auto t = load("TW_TEST_PLUGIN_FUTURE", no_settings(), 0, &why);
    REQUIRE(t);
    Link link(*t);
    link.connect();
    struct {
        tw_buf b;
        unsigned char after[16];
    } big;
    std::memset(&big, 0xa5, sizeof big);
    big.b.size = sizeof big.b;
    REQUIRE(t->ops().send_buf_get(link.client, 0, &big.b) == 0);
    CHECK(big.b.size == sizeof big.b); // the caller's size stays
    CHECK(big.b.data != nullptr);
    for (unsigned char byte : big.after) CHECK(byte == 0xa5); // nothing written past it
    CHECK(observed(*t).buf_size == sizeof(tw_buf));
    CHECK(observed(*t).buf_has_future_field == 0);
    std::memcpy(big.b.data, "zc", 2);
    big.b.len = 2;
    REQUIRE(t->ops().send_buf_submit(link.client, &big.b) == 0);
    REQUIRE(link.loop.run_until([&] { return link.received.size() >= 2; }, 5000ms));
    CHECK(link.received == "zc");

    tw_buf small = TW_BUF_INIT;
    small.size = TW_BUF_SIZE_V1 - 8;
    CHECK(t->ops().send_buf_get(link.client, 0, &small) == -EINVAL);
    CHECK(small.data == nullptr);
}

TEST_CASE("private ctrl ops answer only in their own transport's namespace and check the data's length", "[growth]")
{
    std::string why;
    auto t = load("TW_TEST_PLUGIN_FUTURE", no_settings(), 0, &why);
    REQUIRE(t);
    future_observed seen{};
    CHECK(t->ops().ctrl(t->handle(), nullptr, FUTURE_NAME, FUTURE_CTRL_OBSERVED, &seen, sizeof seen) == 0);
    CHECK(t->ops().ctrl(t->handle(), nullptr, "rdma", FUTURE_CTRL_OBSERVED, &seen, sizeof seen) == -EOPNOTSUPP);
    CHECK(t->ops().ctrl(t->handle(), nullptr, FUTURE_NAME, FUTURE_CTRL_OBSERVED, &seen, sizeof seen - 1) == -EINVAL);
    // A shared op (no namespace) reaches the shared implementation.
    tw_transport_stats st{};
    st.size = sizeof st;
    CHECK(t->ops().ctrl(t->handle(), nullptr, nullptr, TW_CTRL_GET_TRANSPORT_STATS, &st, sizeof st) == 0);
    CHECK(t->ops().ctrl(t->handle(), nullptr, nullptr, TW_CTRL_GET_TRANSPORT_STATS, &st, 4) == -EINVAL);
}

TEST_CASE("a host service that fails inside returns an error to the plugin and logs why; no exception reaches C",
          "[growth]")
{
    std::string why;
    auto t = load("TW_TEST_PLUGIN_FUTURE", no_settings(), 0, &why);
    REQUIRE(t);
    LogCapture logs;
    // config_get records every key looked up: the first allocation is that
    // record.  It fails; the plugin (C, no unwind tables) gets NULL.
    future_config_get q{"future.a_key_long_enough_to_need_the_heap", "not called", nullptr};
    g_fail_alloc_in = 1;
    int rc = t->ops().ctrl(t->handle(), nullptr, FUTURE_NAME, FUTURE_CTRL_CONFIG_GET, &q, sizeof q);
    g_fail_alloc_in = 0;
    CHECK(rc == 0);
    CHECK(q.value == nullptr);
    auto lines = logs.from(FUTURE_NAME);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].level == LogLevel::Error);
    CHECK(lines[0].text.find("host service config_get failed") != std::string::npos);
    CHECK(lines[0].text.find("bad_alloc") != std::string::npos);

    // With memory back, the same lookup works (the key is simply unset).
    q.value = "not called";
    REQUIRE(t->ops().ctrl(t->handle(), nullptr, FUTURE_NAME, FUTURE_CTRL_CONFIG_GET, &q, sizeof q) == 0);
    CHECK(q.value == nullptr);
    CHECK(std::string(q.origin) == "unset");
}

TEST_CASE("a task that cannot be queued is refused with -ENOMEM, never run, and the plugin keeps its argument",
          "[growth]")
{
    std::string why;
    auto t = load("TW_TEST_PLUGIN_FUTURE", no_settings(), 0, &why);
    REQUIRE(t);
    Loop loop; // a fresh loop: queueing its first task allocates the queue
    int ran = 0;
    LogCapture logs;
    future_run_in_loop q{loop.handle(), &ran, 1};
    g_fail_alloc_in = 1;
    int rc = t->ops().ctrl(t->handle(), nullptr, FUTURE_NAME, FUTURE_CTRL_RUN_IN_LOOP, &q, sizeof q);
    g_fail_alloc_in = 0;
    REQUIRE(rc == 0);
    CHECK(q.rc == -ENOMEM);
    auto lines = logs.from("loop");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].text.find("host service run_in_loop failed") != std::string::npos);
    loop.run_once(0ms);
    CHECK(ran == 0);

    REQUIRE(t->ops().ctrl(t->handle(), nullptr, FUTURE_NAME, FUTURE_CTRL_RUN_IN_LOOP, &q, sizeof q) == 0);
    CHECK(q.rc == 0);
    CHECK(loop.run_until([&] { return ran == 1; }, 1000ms));
}

TEST_CASE("a member is present only when the whole of it fits in size, as abi.h says", "[growth]")
{
    tw_host host{};
    const uint32_t at = offsetof(tw_host, vlog);
    host.size = at;
    CHECK(!TW_HAS_MEMBER(&host, tw_host, vlog));
    host.size = at + sizeof(host.vlog) - 1; // part of it: absent
    CHECK(!TW_HAS_MEMBER(&host, tw_host, vlog));
    host.size = at + sizeof(host.vlog);
    CHECK(TW_HAS_MEMBER(&host, tw_host, vlog));
    // The 1.0 minimum ends where the 1.1 member starts.
    CHECK(TW_HOST_SIZE_V1 == at);
    host.size = TW_HOST_SIZE_V1;
    CHECK(TW_HAS_MEMBER(&host, tw_host, in_loop_thread));
}

TEST_CASE("a plugin built against the ABI 1.2 headers loads: its vtable ends before the 1.3 RMA members, which get "
          "the host's stubs",
          "[growth]")
{
    PluginLoadReport report;
    auto lib = PluginLibrary::open_file(env_path("TW_TEST_PLUGIN_ABI_1_2"), &report);
    INFO(report.reason);
    REQUIRE(lib);
    CHECK(lib->info().abi_minor == 2);
    CHECK(lib->info().ops->size == 296); // TW_TRANSPORT_OPS_SIZE_V1: 1.2 did not grow the vtable
    CHECK(lib->ops().size == sizeof(tw_transport_ops));
    CHECK_FALSE(lib->ops().caps & TW_CAP_RMA);
    CHECK(lib->ops().rma_post(nullptr, nullptr) == -EOPNOTSUPP);
    CHECK(lib->ops().rma_expose(nullptr, nullptr, 0, 0, nullptr, nullptr, nullptr) == -EOPNOTSUPP);
}

TEST_CASE("a plugin built against the ABI 1.2 headers serves a stream, and RMA over it through the host's emulation",
          "[growth]")
{
    Config config;
    config.set("transport", "abi12");
    config.set("plugin_path", env_path("TW_TEST_PLUGIN_ABI_1_2"));
    config.set("threads", "1");
    Runtime rt(config);
    rt.start();
    std::string memory(100000, '\0');
    for (size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<char>(i * 7);
    RmaExposurePtr exposure;
    auto listener = rt.listen({"127.0.0.1", 0}, [&](const ConnectionPtr &c) {
        REQUIRE(c->enable_rma());
        exposure = c->expose(&memory[0], memory.size(), RmaAccess::read);
        REQUIRE(exposure);
        c->write(std::string(1, static_cast<char>(exposure->descriptor().size())) + exposure->descriptor());
        c->on_data([](Connection &conn, Buffer &in) { conn.write(in); }); // and an echo
    });
    std::string transport, read_back(memory.size(), 'x'), echoed;
    std::error_code status{make_error_code(errc::transport_error)};
    rt.connect(ConnectOptions("127.0.0.1", listener->port()), [&](const ConnectionPtr &c, const ConnectError &) {
        REQUIRE(c);
        transport = c->transport_name();
        REQUIRE(c->enable_rma());
        c->read_exactly(1, [&](Connection &conn, std::string len) {
            conn.read_exactly(static_cast<unsigned char>(len[0]), [&](Connection &conn2, std::string desc) {
                REQUIRE_FALSE(conn2.rma_read(desc, 0, &read_back[0], read_back.size(),
                                             [&](std::error_code st, const std::string &) {
                                                 status = st;
                                                 conn2.write("ping");
                                             }));
                conn2.on_data([&](Connection &, Buffer &in) {
                    echoed += in.take(in.size());
                    if (echoed == "ping") rt.stop(false);
                });
            });
        });
    });
    Timer watchdog(rt.loop(0), [&] { rt.stop(false); });
    watchdog.start(std::chrono::seconds(30));
    rt.run();
    CHECK(transport == "abi12");
    CHECK_FALSE(status);
    CHECK(read_back == memory);
    CHECK(echoed == "ping");
}
