// SPDX-License-Identifier: MIT
// Every transport's keys are validated in every mode (issue 11 item 7): the
// plugin's check_config runs when TCP is chosen, in auto mode on a host
// without a device, and for --check-config; keys of a transport whose
// plugin is not installed are an error.
#include <twinwire/transport.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace twinwire;

namespace {

std::string checking_plugin()
{
    const char *v = std::getenv("TW_TEST_PLUGIN_CHECKS_CONFIG");
    if (!v) FAIL("the test runner must set TW_TEST_PLUGIN_CHECKS_CONFIG");
    return v;
}

Config with_window(const char *transport, const char *key, const char *value)
{
    Config c;
    c.set("transport", transport);
    c.set("plugin_path", checking_plugin());
    c.set(key, value, "t.conf:2");
    return c;
}

} // namespace

TEST_CASE("a bad rdma.* value stops start-up with transport = tcp", "[keys]")
{
    CHECK_THROWS_AS(select_transports(with_window("tcp", "rdma.window", "0")), ConfigError);
    CHECK_THROWS_WITH(select_transports(with_window("tcp", "rdma.window", "0")),
                      "rdma.window: bad value '0' (t.conf:2): expected 1..64 (rdma transport)");
}

TEST_CASE("a bad rdma.* value stops start-up in auto mode on a host without a device", "[keys]")
{
    // The plugin's init refuses (no device): auto would fall back to TCP,
    // but the value is checked before that.
    CHECK_THROWS_WITH(select_transports(with_window("auto", "rdma.window", "many")),
                      Catch::Contains("rdma.window: bad value 'many'"));
    TransportSelection sel = select_transports(with_window("auto", "rdma.window", "8"));
    CHECK(sel.chosen == "tcp");
}

TEST_CASE("a typo under rdma. is an unknown key in every mode", "[keys]")
{
    CHECK_THROWS_WITH(select_transports(with_window("tcp", "rdma.windw", "8")),
                      "unknown key(s) for the rdma transport: rdma.windw (t.conf:2)");
    CHECK_THROWS_WITH(check_transport_keys(with_window("auto", "rdma.windw", "8")),
                      "unknown key(s) for the rdma transport: rdma.windw (t.conf:2)");
}

TEST_CASE("a bad tcp.* value stops start-up whatever transport is chosen", "[keys]")
{
    CHECK_THROWS_WITH(check_transport_keys(with_window("rdma", "tcp.nodelay", "maybe")),
                      Catch::Contains("tcp.nodelay") && Catch::Contains("maybe"));
}

TEST_CASE("keys of a transport whose plugin is not installed are an error naming them and the file", "[keys]")
{
    Config c;
    c.set("transport", "tcp");
    c.set("plugin_path", "/nonexistent/plugins");
    c.set("foo.window", "3", "t.conf:7");
    CHECK_THROWS_WITH(check_transport_keys(c),
                      Catch::StartsWith("foo.window (t.conf:7): keys of transport 'foo', whose plugin cannot be "
                                        "loaded to check them: twinwire-foo-abi1.so not found") &&
                          Catch::EndsWith("(remove the keys, or install twinwire-foo-abi1.so)"));
}

TEST_CASE("the keys a transport knows are what its check_config or init looks up", "[keys]")
{
    std::vector<std::string> tcp = transport_keys("tcp", Config());
    CHECK(std::find(tcp.begin(), tcp.end(), "tcp.nodelay") != tcp.end());
    CHECK(std::find(tcp.begin(), tcp.end(), "tcp.linger_ms") != tcp.end());
    Config c;
    c.set("plugin_path", checking_plugin());
    CHECK(transport_keys("rdma", c) == std::vector<std::string>{"rdma.window"});
}
