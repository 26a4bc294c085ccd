// SPDX-License-Identifier: MIT
// init() refusals: each with the reason a person can act on.  The port-down
// case changes the guest's links, so this file runs last.
#include "rdma_test.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <thread>

#include <unistd.h>

using namespace twinwire::conformance;
using namespace twinwire::rdmatest;
using namespace std::chrono_literals;

TEST_CASE("with RLIMIT_MEMLOCK too low and no CAP_IPC_LOCK, init refuses with the limit, the need and the fix",
          "[rdma][init]")
{
    std::string out;
    int rc = run_child({"memlock"}, &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("RLIMIT_MEMLOCK is 64 KiB") != std::string::npos);
    CHECK(out.find("ulimit -l") != std::string::npos);
    CHECK(out.find("LimitMEMLOCK") != std::string::npos);
}

TEST_CASE("with no RDMA device visible, init refuses with TW_ENODEVICE and says so", "[rdma][init]")
{
    std::string out;
    int rc = run_child({"nodevice"}, &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("no RDMA device") != std::string::npos);
}

TEST_CASE("a bad rdma.* value is a configuration error naming the key, the value and where it came from",
          "[rdma][init]")
{
    // A mistake in the configuration stops start-up in every mode, auto
    // included: it is not a missing capability to fall back from.
    std::string why;
    try {
        make_transport({{"rdma.ring_size", "100k"}}, &why);
        FAIL("no ConfigError for rdma.ring_size = 100k");
    } catch (const twinwire::ConfigError &e) {
        why = e.what();
    }
    CHECK(why.find("rdma.ring_size") != std::string::npos);
    CHECK(why.find("100k") != std::string::npos);
    CHECK(why.find("(test)") != std::string::npos);
    CHECK(why.find("power of two") != std::string::npos);
}

TEST_CASE("rdma.busy_poll_us on a machine with one CPU is warned about at init, and only there", "[rdma][init]")
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (const char *window : {"0", "200"}) {
        LogWatch logs;
        std::string why;
        auto transport = make_transport({{"rdma.busy_poll_us", window}}, &why);
        REQUIRE(transport);
        const bool warned = logs.text().find("rdma.busy_poll_us is 200 on a machine with one CPU") != std::string::npos;
        INFO("rdma.busy_poll_us = " << window << " with " << cpus << " CPU(s) online; warnings:\n" << logs.text());
        CHECK(warned == (std::string(window) != "0" && cpus == 1));
        if (warned) CHECK(logs.text().find("rdma.busy_poll_us = 0 here") != std::string::npos);
    }
}

static std::string port_state(const char *dev)
{
    std::ifstream f(std::string("/sys/class/infiniband/") + dev + "/ports/1/state");
    std::string s;
    std::getline(f, s);
    return s;
}

TEST_CASE("with every RDMA port down, init refuses with TW_EPORTDOWN naming the port", "[rdma][init][links]")
{
    use_settings({});
    release_transport();
    REQUIRE(std::system("ip link set sr0 down && (ip link set sr1 down 2>/dev/null; true)") == 0);
    for (int i = 0; i < 100 && port_state("rxe0").find("ACTIVE") != std::string::npos; i++)
        std::this_thread::sleep_for(100ms);
    std::string why;
    auto t = make_transport({}, &why);
    // Restore the wire before checking anything (later runs need it).
    std::system("ip link set sr0 up; ip link set sr1 up 2>/dev/null; "
                "ip route replace 10.77.0.2/32 dev sr0 table 101 2>/dev/null; "
                "ip route replace 10.77.0.1/32 dev sr1 table 102 2>/dev/null; true");
    for (int i = 0; i < 100 && port_state("rxe0").find("ACTIVE") == std::string::npos; i++)
        std::this_thread::sleep_for(100ms);
    CHECK(t == nullptr);
    INFO(why);
    CHECK(why.find("no RDMA port is ACTIVE") != std::string::npos);
    CHECK(why.find("rxe0") != std::string::npos);
}
