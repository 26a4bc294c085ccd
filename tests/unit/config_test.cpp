// SPDX-License-Identifier: MIT
#include <twinwire/config.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <unistd.h>

using twinwire::Config;
using twinwire::ConfigError;
using twinwire::TransportMode;

namespace {

// Sets an environment variable for the scope of one test.
struct EnvVar {
    std::string name;
    EnvVar(const char *n, const char *v) : name(n) { setenv(n, v, 1); }
    ~EnvVar() { unsetenv(name.c_str()); }
};

std::string error_of(const std::function<void()> &fn)
{
    try {
        fn();
    } catch (const ConfigError &e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("defaults are auto transport on loopback with one thread", "[config]")
{
    Config c;
    CHECK(c.transport() == TransportMode::Auto);
    CHECK(c.listen_address() == "127.0.0.1");
    CHECK(c.threads() == 1);
    CHECK(c.read_buffer_size() == 64 * 1024);
    CHECK(c.find("transport")->origin == "default");
}

TEST_CASE("an INI file sets keys, sections prefix them, comments are ignored", "[config]")
{
    Config c;
    c.load_string("# a comment\n"
                  "transport = tcp\n"
                  "threads=4   # inline comment\n"
                  "listen_address = \"::1\"\n"
                  "; another comment\n"
                  "[rdma]\n"
                  "ring_size = 256k\n"
                  "[twinwire]\n"
                  "listen_port = 9000\n",
                  "test.conf");
    CHECK(c.transport() == TransportMode::Tcp);
    CHECK(c.threads() == 4);
    CHECK(c.listen_address() == "::1");
    CHECK(c.listen_port() == 9000);
    CHECK(c.get("rdma.ring_size") == "256k");
    CHECK(c.find("threads")->origin == "test.conf:3");
    CHECK(c.find("rdma.ring_size")->origin == "test.conf:7");
}

TEST_CASE("an unknown key is an error naming the key and file:line", "[config]")
{
    Config c;
    std::string e = error_of([&] { c.load_string("transport = tcp\nthreds = 4\n", "my.conf"); });
    CHECK(e == "my.conf:2: unknown key 'threds'");
}

TEST_CASE("a bad value is an error naming key, value, file:line and what is expected", "[config]")
{
    Config c;
    CHECK(error_of([&] { c.load_string("threads = many\n", "a.conf"); }) ==
          "a.conf:1: bad value 'many' for 'threads': expected an integer 1..256");
    CHECK(error_of([&] { c.load_string("\ntransport = infiniband\n", "b.conf"); }) ==
          "b.conf:2: bad value 'infiniband' for 'transport': expected one of auto, tcp, rdma");
    CHECK(error_of([&] { c.load_string("read_buffer_size = 1T\n", "c.conf"); })
              .find("c.conf:1: bad value '1T' for 'read_buffer_size': expected a size") == 0);
    CHECK(error_of([&] { c.load_string("plugin_path = relative/x.so\n", "d.conf"); }) ==
          "d.conf:1: bad value 'relative/x.so' for 'plugin_path': expected an absolute path");
}

TEST_CASE("malformed lines are errors with their line number", "[config]")
{
    Config c;
    CHECK(error_of([&] { c.load_string("[broken\n", "x.conf"); }) == "x.conf:1: expected '[section]', got '[broken'");
    CHECK(error_of([&] { c.load_string("threads\n", "x.conf"); }) == "x.conf:1: expected 'key = value', got 'threads'");
    CHECK(error_of([&] { c.load_string("log_file = \"unterminated\n", "x.conf"); }) ==
          "x.conf:1: unterminated quoted value");
}

TEST_CASE("a missing file is an error naming it", "[config]")
{
    Config c;
    CHECK(error_of([&] { c.load_file("/nonexistent/twinwire.conf"); }) ==
          "/nonexistent/twinwire.conf: cannot open configuration file");
}

TEST_CASE("a file on disk loads like a string", "[config]")
{
    char path[] = "/tmp/twinwire-config-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    std::ofstream(path) << "transport = rdma\nlisten_port = 1234\n";
    Config c;
    c.load_file(path);
    CHECK(c.transport() == TransportMode::Rdma);
    CHECK(c.find("listen_port")->origin == std::string(path) + ":2");
    unlink(path);
}

TEST_CASE("environment overrides the file, and API calls override the environment", "[config]")
{
    EnvVar t("TWINWIRE_TRANSPORT", "tcp");
    EnvVar p("TWINWIRE_LISTEN_PORT", "7000");
    EnvVar r("TWINWIRE_RDMA_RING_SIZE", "1M");
    Config c;
    c.load_string("transport = rdma\nlisten_port = 6000\n", "f.conf");
    c.load_environment();
    CHECK(c.transport() == TransportMode::Tcp);
    CHECK(c.find("transport")->origin == "environment TWINWIRE_TRANSPORT");
    CHECK(c.listen_port() == 7000);
    CHECK(c.get("rdma.ring_size") == "1M");
    c.set("listen_port", "8000", "--port");
    CHECK(c.listen_port() == 8000);
    CHECK(c.find("listen_port")->origin == "--port");
}

TEST_CASE("a bad environment value names the variable", "[config]")
{
    EnvVar t("TWINWIRE_THREADS", "0");
    Config c;
    CHECK(error_of([&] { c.load_environment(); }) ==
          "environment TWINWIRE_THREADS: bad value '0' for 'threads': expected an integer 1..256");
}

TEST_CASE("an unknown TWINWIRE_ variable is an error", "[config]")
{
    EnvVar t("TWINWIRE_NO_SUCH_KEY", "1");
    Config c;
    CHECK(error_of([&] { c.load_environment(); }) == "environment TWINWIRE_NO_SUCH_KEY: unknown key 'no_such_key'");
}

TEST_CASE("TWINWIRE_PLUGIN_PATH is the loader's search path, not a config key", "[config]")
{
    EnvVar t("TWINWIRE_PLUGIN_PATH", "/opt/plugins");
    Config c;
    c.load_environment();
    CHECK(c.plugin_path().empty());
}

TEST_CASE("applications add their own keys with validators", "[config]")
{
    Config c;
    c.define({"kvd.maxclients", "10000", "most clients at once", twinwire::check::integer(1, 1000000)});
    CHECK(c.get_int("kvd.maxclients") == 10000);
    c.load_string("[kvd]\nmaxclients = 5\n", "kvd.conf");
    CHECK(c.get_int("kvd.maxclients") == 5);
    CHECK(error_of([&] { c.load_string("[kvd]\nmaxclients = -1\n", "kvd.conf"); }) ==
          "kvd.conf:2: bad value '-1' for 'kvd.maxclients': expected an integer 1..1000000");
    EnvVar e("TWINWIRE_KVD_MAXCLIENTS", "77");
    c.load_environment();
    CHECK(c.get_int("kvd.maxclients") == 77);
}

TEST_CASE("transport keys are kept for the transport and reported when nobody reads them", "[config]")
{
    Config c;
    c.load_string("[rdma]\nring_size = 1M\nring_sise = 2M\n", "r.conf");
    auto unknown = c.unknown_keys_under("rdma.", {"rdma.ring_size"});
    REQUIRE(unknown.size() == 1);
    CHECK(unknown[0] == "rdma.ring_sise (r.conf:3)");
}

TEST_CASE("sizes accept k, M and G suffixes", "[config]")
{
    Config c;
    c.set("read_buffer_size", "1M");
    CHECK(c.read_buffer_size() == 1024 * 1024);
    c.set("read_buffer_size", "4096");
    CHECK(c.read_buffer_size() == 4096);
    c.set("write_buffer_limit", "2GiB");
    CHECK(c.write_buffer_limit() == 2ull * 1024 * 1024 * 1024);
}
