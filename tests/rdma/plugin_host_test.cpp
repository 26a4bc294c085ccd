// SPDX-License-Identifier: MIT
// rdma-plugin-host-tests: the built RDMA plugin on this host, which has no
// RDMA device.  dlopen'ed as the framework does, driven through its vtable
// with a minimal host table (tests/plugin_host_fake.hpp).  Run twice: as is (rdma-core installed), and by
// without_rdma_core.sh with libibverbs.so.1 or librdmacm.so.1 hidden, which
// sets TW_TEST_HIDDEN_SONAME and selects the [without-rdma-core] cases.
#include <catch2/catch.hpp>

#include "../child_output.hpp"
#include "../plugin_host_fake.hpp"

#include <dlfcn.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

namespace {

using twinwire::testing::FakeHost;
const char *const kOrigin = FakeHost::kOrigin;

// Every key the plugin documents (docs/rdma-design.md, section 10).
const std::map<std::string, std::string> kEveryKeyValid = {
    {"rdma.ring_size", "256k"},    {"rdma.send_buffer_size", "128k"},
    {"rdma.recv_depth", "128"},    {"rdma.control_credits", "8"},
    {"rdma.sq_depth", "256"},      {"rdma.pool_size", "16M"},
    {"rdma.pool_max", "512M"},     {"rdma.qp_timeout", "16"},
    {"rdma.retry_count", "5"},     {"rdma.rnr_retry", "6"},
    {"rdma.keepalive_ms", "2000"}, {"rdma.dead_peer_ms", "9000"},
    {"rdma.linger_ms", "100"},     {"rdma.busy_poll_us", "50"},
    {"rdma.device", "mlx5_0"},     {"rdma.port", "1"},
    {"rdma.gid_index", "3"},
};

// The plugin, loaded once for the process as the framework loads it.
const tw_transport_ops &plugin()
{
    static const tw_transport_ops &ops = twinwire::testing::load_plugin_ops(std::getenv("TW_TEST_RDMA_PLUGIN"));
    REQUIRE(ops.size >= offsetof(tw_transport_ops, check_config) + sizeof ops.check_config);
    REQUIRE(ops.check_config != nullptr);
    return ops;
}

int check(const std::map<std::string, std::string> &settings, std::string *why = nullptr)
{
    return twinwire::testing::check_config(plugin(), settings, why);
}

bool in_process(const char *soname)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != nullptr;
}

std::string hidden_soname()
{
    const char *s = std::getenv("TW_TEST_HIDDEN_SONAME");
    return s ? s : "";
}

// libibverbs finds devices through this class; without it (no ib_uverbs
// module) ibv_get_device_list fails with ENOSYS.
bool kernel_has_uverbs() { return access("/sys/class/infiniband_verbs", F_OK) == 0; }

// Run `body` in a child without CAP_IPC_LOCK and with RLIMIT_MEMLOCK at
// `limit` bytes; what it returns ("" = good) comes back through a pipe.
std::string in_child_with_memlock(rlim_t limit, const std::function<std::string()> &body)
{
    return twtest::output_of_child([&]() -> std::string {
        __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct caps[2]{};
        if (syscall(SYS_capget, &hdr, caps) == 0) {
            caps[0].effective &= ~(1u << CAP_IPC_LOCK);
            if (syscall(SYS_capset, &hdr, caps) != 0) return "capset failed";
        }
        rlimit rl{limit, limit};
        if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0) return "setrlimit failed";
        return body();
    });
}

} // namespace

// First in the file (Catch runs cases in declaration order): later cases
// call init, which loads rdma-core.
TEST_CASE("loading the RDMA plugin and checking its settings load no rdma-core library", "[any]")
{
    REQUIRE_FALSE(in_process("libibverbs.so.1")); // this executable does not link it
    REQUIRE_FALSE(in_process("librdmacm.so.1"));
    CHECK(check(kEveryKeyValid) == 0);
    CHECK_FALSE(in_process("libibverbs.so.1"));
    CHECK_FALSE(in_process("librdmacm.so.1"));
}

TEST_CASE("check_config accepts valid rdma.* settings and looks up every rdma.* key", "[any]")
{
    CHECK(check({}) == 0);
    CHECK(check({{"rdma.device", ""}}) == 0); // empty, like unset: any device
    FakeHost host(kEveryKeyValid);
    char why[512] = "";
    CHECK(plugin().check_config(&host.table, why, sizeof why) == 0);
    INFO(why);
    // The host names every key under rdma. that was not looked up as
    // unknown: so every supported key must be.
    for (const auto &kv : kEveryKeyValid) {
        INFO(kv.first);
        CHECK(host.looked_up.count(kv.first) == 1);
    }
    CHECK(host.log.empty()); // a check is silent
}

TEST_CASE("check_config refuses a bad rdma.* value naming the key, the value, its origin and what is expected", "[any]")
{
    struct Bad {
        std::map<std::string, std::string> settings;
        const char *named;    // key (and value) the reason must quote
        const char *expected; // what it must say is wrong
    };
    const Bad cases[] = {
        {{{"rdma.ring_size", "1000"}}, "rdma.ring_size = 1000", "between 4 KiB and 256 MiB"},
        {{{"rdma.ring_size", "1000k"}}, "rdma.ring_size = 1000k", "power of two"},
        {{{"rdma.ring_size", "100k"}}, "rdma.ring_size = 100k", "power of two"},
        {{{"rdma.ring_size", "lots"}}, "rdma.ring_size = lots", "expected a size"},
        {{{"rdma.send_buffer_size", "1G"}}, "rdma.send_buffer_size = 1G", "between"},
        {{{"rdma.recv_depth", "x"}}, "rdma.recv_depth = x", "expected an integer"},
        {{{"rdma.sq_depth", "8"}}, "rdma.sq_depth = 8", "between 16 and"},
        {{{"rdma.rnr_retry", "7"}}, "rdma.rnr_retry = 7", "between 0 and 6"},
        {{{"rdma.qp_timeout", "0"}}, "rdma.qp_timeout = 0", "between 1 and 31"},
        {{{"rdma.port", "256"}}, "rdma.port = 256", "between 0 and 255"},
        {{{"rdma.gid_index", "-2"}}, "rdma.gid_index = -2", "between 0 and 65535"},
        {{{"rdma.busy_poll_us", "9999999"}}, "rdma.busy_poll_us = 9999999", "between"},
        {{{"rdma.device", "mlx5/0"}}, "rdma.device = mlx5/0", "device name"},
        {{{"rdma.device", std::string(64, 'x')}}, "rdma.device = xxx", "at most 63 characters"},
        {{{"rdma.control_credits", "40"}}, "rdma.control_credits = 40", "at most half"},
        {{{"rdma.pool_size", "16M"}, {"rdma.pool_max", "8M"}}, "rdma.pool_max", "smaller than rdma.pool_size"},
        {{{"rdma.keepalive_ms", "5000"}, {"rdma.dead_peer_ms", "4000"}},
         "rdma.dead_peer_ms = 4000",
         "larger than rdma.keepalive_ms"},
        {{{"rdma.ring_size", "128M"}, {"rdma.pool_size", "64k"}, {"rdma.pool_max", "64M"}},
         "rdma.pool_max",
         "cannot hold one connection"},
    };
    for (const Bad &bad : cases) {
        std::string why;
        int rc = check(bad.settings, &why);
        INFO(bad.named << " -> " << why);
        CHECK(rc == -TW_ECONFIG);
        CHECK(why.find(bad.named) != std::string::npos);
        CHECK(why.find(bad.expected) != std::string::npos);
        CHECK(why.find(std::string("(") + kOrigin + ")") != std::string::npos); // where it came from
    }
}

TEST_CASE("init refuses a bad rdma.* value as check_config does, before it looks for rdma-core or a device", "[any]")
{
    const std::map<std::string, std::string> bad = {{"rdma.ring_size", "100k"}};
    std::string checked;
    REQUIRE(check(bad, &checked) == -TW_ECONFIG);
    FakeHost host(bad);
    tw_transport *t = nullptr;
    char why[512] = "";
    int rc = plugin().init(&host.table, &t, why, sizeof why);
    CHECK(rc == -TW_ECONFIG);
    CHECK(t == nullptr);
    CHECK(std::string(why) == checked);
}

TEST_CASE("with rdma-core installed, init opens it itself and refuses only for want of a device", "[with-rdma-core]")
{
    REQUIRE(hidden_soname().empty());
    FakeHost host(kEveryKeyValid);
    host.config.erase("rdma.device"); // any device, had this host one
    host.config.erase("rdma.gid_index");
    tw_transport *t = nullptr;
    char why[512] = "";
    int rc = plugin().init(&host.table, &t, why, sizeof why);
    INFO("init: " << rc << " " << why);
    CHECK(rc != -TW_ECONFIG);
    CHECK(rc != -ELIBACC);
    CHECK(in_process("libibverbs.so.1"));
    CHECK(in_process("librdmacm.so.1"));
    if (rc == -TW_ENODEVICE)
        CHECK(std::string(why).find(kernel_has_uverbs()
                                        ? "no RDMA device found"
                                        : "this kernel has no RDMA support (ib_uverbs)") != std::string::npos);
    if (rc == 0) {
        WARN("this host has a usable RDMA device: init succeeded (" << host.log << ")");
        plugin().fini(t);
    }
}

TEST_CASE("without rdma-core the plugin loads, checks its settings, and init and probe name the missing library "
          "and its package",
          "[without-rdma-core]")
{
    const std::string soname = hidden_soname();
    REQUIRE_FALSE(soname.empty()); // without_rdma_core.sh sets it
    const std::string package = soname.substr(0, soname.find(".so")) + "1";
    CHECK(check(kEveryKeyValid) == 0);

    FakeHost host({});
    tw_transport *t = nullptr;
    char why[512] = "";
    int rc = plugin().init(&host.table, &t, why, sizeof why);
    INFO("init: " << rc << " " << why);
    CHECK(rc == -ELIBACC);
    CHECK(t == nullptr);
    CHECK(std::string(why).find(soname + " (rdma-core) cannot be loaded") != std::string::npos);
    CHECK(std::string(why).find("install " + package) != std::string::npos);

    char probe[1024] = "";
    CHECK(plugin().probe(&host.table, probe, sizeof probe) > 0);
    INFO("probe: " << probe);
    CHECK(std::string(probe).find(soname) != std::string::npos);
}

TEST_CASE("with RLIMIT_MEMLOCK below the pool's start, init refuses naming what the pool can grow to and the fix",
          "[with-rdma-core]")
{
    REQUIRE(hidden_soname().empty());
    std::string result = in_child_with_memlock(64 << 10, [] {
        FakeHost host({{"rdma.pool_size", "8M"}, {"rdma.pool_max", "64M"}});
        tw_transport *t = nullptr;
        char why[1024] = "";
        int rc = plugin().init(&host.table, &t, why, sizeof why);
        if (rc != -TW_EMEMLOCK) return "init returned " + std::to_string(rc) + ": " + why;
        return std::string(why);
    });
    INFO(result);
    CHECK(result.find("RLIMIT_MEMLOCK is 64 KiB") == 0);
    CHECK(result.find("registers 9 MiB at start") != std::string::npos);
    CHECK(result.find("can grow to 65 MiB per event-loop thread and device") != std::string::npos);
    CHECK(result.find("LimitMEMLOCK=infinity") != std::string::npos);
    CHECK(result.find("ulimit -l 66560") != std::string::npos); // (64 + 1) MiB in KiB
}

TEST_CASE("with RLIMIT_MEMLOCK enough for the pool's start but not its growth, the pool is fitted to the limit and "
          "init warns naming both",
          "[with-rdma-core]")
{
    REQUIRE(hidden_soname().empty());
    std::string result = in_child_with_memlock(4 << 20, [] {
        FakeHost host({{"rdma.pool_size", "1M"}, {"rdma.pool_max", "64M"}});
        tw_transport *t = nullptr;
        char why[1024] = "";
        int rc = plugin().init(&host.table, &t, why, sizeof why);
        if (rc == 0) plugin().fini(t);
        if (rc == -TW_EMEMLOCK) return "refused: " + std::string(why);
        return host.log;
    });
    INFO(result);
    CHECK(result.find("RLIMIT_MEMLOCK is 4096 KiB, less than rdma.pool_max (64 MiB) plus queues: the pool starts at "
                      "1 MiB and grows to 3 MiB per event-loop thread and device") != std::string::npos);
    CHECK(result.find("past it new connections are refused with the reason") != std::string::npos);
}

TEST_CASE("probe on a kernel without ib_uverbs says the kernel has no RDMA support instead of 'no device'",
          "[with-rdma-core]")
{
    REQUIRE(hidden_soname().empty());
    if (kernel_has_uverbs()) {
        WARN("not checked: this kernel has ib_uverbs (the SoftRoCE guest's probe case covers devices)");
        return;
    }
    FakeHost host({});
    char probe[2048] = "";
    CHECK(plugin().probe(&host.table, probe, sizeof probe) > 0);
    INFO("probe: " << probe);
    CHECK(std::string(probe).find("error: this kernel has no RDMA support (ib_uverbs)") != std::string::npos);
    CHECK(std::string(probe).find("modprobe ib_uverbs") != std::string::npos);
}
