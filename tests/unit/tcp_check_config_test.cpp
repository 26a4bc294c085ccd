// SPDX-License-Identifier: MIT
// The TCP backend's check_config, through the built module's vtable: the
// tcp.* keys are validated without init, on any host.
#include "../plugin_host_fake.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

namespace {

const tw_transport_ops &tcp_module()
{
    static const tw_transport_ops &ops = twinwire::testing::load_plugin_ops(std::getenv("TW_TEST_TCP_MODULE"));
    REQUIRE(ops.check_config != nullptr);
    return ops;
}

} // namespace

TEST_CASE("the TCP backend's check_config accepts valid tcp.* settings and looks up every tcp.* key",
          "[tcp][check_config]")
{
    const std::map<std::string, std::string> every = {
        {"tcp.nodelay", "off"},         {"tcp.linger_ms", "250"},          {"tcp.keepalive", "yes"},
        {"tcp.keepalive_idle_s", "30"}, {"tcp.keepalive_interval_s", "5"}, {"tcp.keepalive_count", "3"}};
    twinwire::testing::FakeHost host(every);
    char why[256] = "";
    CHECK(tcp_module().check_config(&host.table, why, sizeof why) == 0);
    INFO(why);
    for (const auto &kv : every) CHECK(host.looked_up.count(kv.first) == 1);
    CHECK(twinwire::testing::check_config(tcp_module(), {}) == 0);
}

TEST_CASE("the TCP backend's check_config refuses a bad tcp.* value naming the key, the value, its origin and "
          "what is expected",
          "[tcp][check_config]")
{
    const std::pair<const char *, const char *> bad[] = {{"tcp.nodelay", "maybe"},
                                                         {"tcp.linger_ms", "-1"},
                                                         {"tcp.linger_ms", "3600001"},
                                                         {"tcp.linger_ms", "5s"},
                                                         {"tcp.keepalive", "sometimes"},
                                                         {"tcp.keepalive_idle_s", "0"},
                                                         {"tcp.keepalive_interval_s", "32768"},
                                                         {"tcp.keepalive_count", "128"}};
    for (const auto &kv : bad) {
        std::string why;
        int rc = twinwire::testing::check_config(tcp_module(), {{kv.first, kv.second}}, &why);
        INFO(kv.first << " = " << kv.second << " -> " << why);
        CHECK(rc == -TW_ECONFIG);
        CHECK(why.find(std::string(kv.first) + " = '" + kv.second + "'") != std::string::npos);
        CHECK(why.find(twinwire::testing::FakeHost::kOrigin) != std::string::npos);
        CHECK(why.find("expected") != std::string::npos);
    }
}
