// SPDX-License-Identifier: MIT
#include <twinwire/config.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "../child_output.hpp"
#include <unistd.h>

using twinwire::Config;
using twinwire::ConfigError;

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
    CHECK(c.transport() == "auto");
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
    CHECK(c.transport() == "tcp");
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
    CHECK(error_of([&] { c.load_string("\ntransport = Infini-Band\n", "b.conf"); }) ==
          "b.conf:2: bad value 'Infini-Band' for 'transport': expected auto, tcp, a transport name or a list of "
          "names: transport name 'Infini-Band' has a character other than a-z, 0-9 and _");
    CHECK(error_of([&] {
              c.load_string("read_buffer_size = 1T\n", "c.conf");
          }).find("c.conf:1: bad value '1T' for 'read_buffer_size': expected a size") == 0);
    CHECK(error_of([&] { c.load_string("plugin_path = relative/x.so\n", "d.conf"); }) ==
          "d.conf:1: bad value 'relative/x.so' for 'plugin_path': expected absolute paths separated by ':' "
          "('relative/x.so' is not one)");
}

TEST_CASE("malformed lines are errors with their line number", "[config]")
{
    Config c;
    CHECK(error_of([&] { c.load_string("[broken\n", "x.conf"); }) == "x.conf:1: expected '[section]', got '[broken'");
    CHECK(error_of([&] { c.load_string("threads\n", "x.conf"); }) == "x.conf:1: expected 'key = value', got 'threads'");
    CHECK(error_of([&] { c.load_string("log_file = \"unterminated\n", "x.conf"); }) ==
          "x.conf:1: unterminated quoted value");
}

TEST_CASE("a missing file is an error naming it and the errno", "[config]")
{
    Config c;
    CHECK(error_of([&] { c.load_file("/nonexistent/twinwire.conf"); }) ==
          "/nonexistent/twinwire.conf: cannot open configuration file: No such file or directory (errno 2)");
}

TEST_CASE("a directory given as the configuration file is an error, not an empty file", "[config]")
{
    Config c;
    CHECK(error_of([&] { c.load_file("/tmp"); }) ==
          "/tmp: is a directory; a configuration file must be a regular file");
}

TEST_CASE("a file that cannot be read for its permissions says so, with errno", "[config]")
{
    char path[] = "/tmp/twinwire-config-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    REQUIRE(chmod(path, 0) == 0);
    // root reads any file: try as nobody in a child.
    std::string e = twtest::output_of_child([&] {
        if (geteuid() == 0 && setuid(65534) != 0) _exit(3);
        return error_of([&] { Config().load_file(path); });
    });
    unlink(path);
    CHECK(e == std::string(path) + ": cannot open configuration file: Permission denied (errno 13)");
}

TEST_CASE("a NUL byte in a configuration file is an error naming the line, never a silent cut", "[config]")
{
    Config c;
    const std::string text = std::string("threads = 2\nlisten_port = 7379") + '\0' + "junk\n";
    CHECK(error_of([&] { c.load_string(text, "n.conf"); }) == "n.conf:2: NUL byte in the line");
    CHECK(error_of([&] { c.set("log_file", std::string("/tmp/a\0b", 8), "api"); }) ==
          "api: NUL byte in the value of 'log_file'");
    CHECK(c.threads() == 1); // the default: nothing of the bad file was taken, line 1 neither
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
    CHECK(c.transport() == "rdma");
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
    CHECK(c.transport() == "tcp");
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

TEST_CASE("TWINWIRE_PLUGIN_PATH is the environment form of plugin_path and overrides the file", "[config]")
{
    EnvVar t("TWINWIRE_PLUGIN_PATH", "/opt/plugins:/srv/plugins");
    Config c;
    c.load_string("plugin_path = /usr/lib/twinwire\n", "p.conf");
    c.load_environment();
    CHECK(c.plugin_path() == "/opt/plugins:/srv/plugins");
    CHECK(c.find("plugin_path")->origin == "environment TWINWIRE_PLUGIN_PATH");
}

TEST_CASE("plugin_path takes absolute directories separated by colons, nothing relative", "[config]")
{
    Config c;
    c.set("plugin_path", "/a:/b/c");
    CHECK(c.plugin_path() == "/a:/b/c");
    CHECK(error_of([&] { c.set("plugin_path", "/a:plugins", "p.conf:1"); }) ==
          "p.conf:1: bad value '/a:plugins' for 'plugin_path': expected absolute paths separated by ':' ('plugins' "
          "is not one)");
    CHECK(error_of([&] { c.set("plugin_path", "/a::/b", "p.conf:1"); }).find("('' is not one)") != std::string::npos);
}

TEST_CASE("transport takes auto, one name or a list of names in order", "[config]")
{
    Config c;
    c.set("transport", "foo");
    CHECK(c.transport_list() == std::vector<std::string>{"foo"});
    c.set("transport", "foo, rdma,tcp");
    CHECK(c.transport_list() == std::vector<std::string>{"foo", "rdma", "tcp"});
    CHECK(error_of([&] { c.set("transport", "rdma,auto", "t"); }) ==
          "t: bad value 'rdma,auto' for 'transport': auto stands alone: it cannot be part of a list");
    CHECK(error_of([&] { c.set("transport", "tcp,tcp", "t"); }) ==
          "t: bad value 'tcp,tcp' for 'transport': transport 'tcp' is listed twice");
    CHECK(error_of([&] { c.set("transport", "rdma,", "t"); }).find("an empty transport name") != std::string::npos);
    CHECK(c.transport() == "foo, rdma,tcp");
}

TEST_CASE("keys of any transport are kept for it, application prefixes stay strict", "[config]")
{
    Config c;
    c.define({"kvd.maxclients", "10", "most clients at once", twinwire::check::integer(1, 100)});
    c.load_string("[foo]\nwindow = 4\n[rdma]\nring_size = 1M\n", "f.conf");
    CHECK(c.get("foo.window") == "4");
    CHECK(c.transport_key_names() == std::vector<std::string>{"foo", "rdma"});
    CHECK(error_of([&] { c.load_string("[kvd]\nmaxclient = 5\n", "k.conf"); }) ==
          "k.conf:2: unknown key 'kvd.maxclient'");
    CHECK(error_of([&] { c.set("Foo.window", "1", "api"); }) == "api: unknown key 'Foo.window'");
}

TEST_CASE("the environment form of a listed transport's key is TWINWIRE_NAME_KEY", "[config]")
{
    EnvVar k("TWINWIRE_FOO_WINDOW_SIZE", "8");
    EnvVar t("TWINWIRE_TRANSPORT", "foo,tcp");
    Config c;
    c.load_environment();
    CHECK(c.get("foo.window_size") == "8");
    CHECK(c.find("foo.window_size")->origin == "environment TWINWIRE_FOO_WINDOW_SIZE");
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

namespace {

// What `fn` threw, with " [code N]" added when its code is not errc::bad_config.
std::string bad_config_error_of(const std::function<void()> &fn)
{
    try {
        fn();
    } catch (const ConfigError &e) {
        std::string text = e.what();
        if (e.code() != twinwire::errc::bad_config) text += " [code " + std::to_string(e.code().value()) + "]";
        return text;
    }
    return "";
}

// A fresh directory under /tmp, removed with what the test put in it.
struct TempDir {
    std::string path;
    TempDir()
    {
        char p[] = "/tmp/twinwire-config-XXXXXX";
        REQUIRE(mkdtemp(p) != nullptr);
        path = p;
    }
    ~TempDir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
};

// load_file in a child that SIGALRM kills after `seconds`: a file that makes
// it block or read forever fails the test instead of hanging the suite.
std::string load_error_in_child(const std::string &path, unsigned seconds)
{
    return twtest::output_of_child([&] {
        alarm(seconds);
        return bad_config_error_of([&] { Config().load_file(path); });
    });
}

// Catch2 prints the operands of a failed CHECK, which takes minutes for
// megabytes: a message longer than 1000 bytes is shown cut (and so differs).
std::string short_or_cut(const std::string &s)
{
    return s.size() < 1000 ? s : s.substr(0, 200) + "[... cut by the test: " + std::to_string(s.size()) + " bytes]";
}

// Every byte printable ASCII: nothing reaches a terminal raw.
bool printable(const std::string &s)
{
    for (unsigned char ch : s)
        if (ch < 0x20 || ch >= 0x7f) return false;
    return true;
}

} // namespace

// The bound covers a blocked open() or read() of a FIFO with no writer; a
// refusal takes one open and one fstat.
TEST_CASE("a FIFO given as the configuration file is refused at once, with no writer too", "[config]")
{
    TempDir dir;
    const std::string fifo = dir.path + "/fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(load_error_in_child(fifo, 20) == fifo + ": is a FIFO; a configuration file must be a regular file");
}

TEST_CASE("a device given as the configuration file is refused at once, never read", "[config]")
{
    // /dev/zero never ends: reading it grew the process to 4 GB.
    CHECK(load_error_in_child("/dev/zero", 20) ==
          "/dev/zero: is a character device; a configuration file must be a regular file");
    CHECK(load_error_in_child("/dev/urandom", 20) ==
          "/dev/urandom: is a character device; a configuration file must be a regular file");
}

TEST_CASE("a Unix socket or a directory given as the configuration file is refused with what it is", "[config]")
{
    TempDir dir;
    const std::string sock = dir.path + "/sock";
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(sock.size() < sizeof addr.sun_path);
    std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
    CHECK(bad_config_error_of([&] { Config().load_file(sock); }) ==
          sock + ": is a socket; a configuration file must be a regular file");
    close(fd);
    CHECK(bad_config_error_of([&] { Config().load_file(dir.path); }) ==
          dir.path + ": is a directory; a configuration file must be a regular file");
}

TEST_CASE("a configuration file holds at most 1 MiB: one byte more is refused before it is read", "[config]")
{
    REQUIRE(Config::max_file_size == 1024 * 1024);
    TempDir dir;
    // Comment lines up to the size, then one setting: all of it must be read.
    auto write_file = [&](const std::string &name, size_t size) {
        const std::string last = "threads = 3\n";
        std::string text;
        while (text.size() + 40 + last.size() <= size) text += std::string(39, '#') + '\n';
        text += std::string(size - text.size() - last.size() - 1, '#') + '\n' + last;
        REQUIRE(text.size() == size);
        std::ofstream(dir.path + "/" + name, std::ios::binary) << text;
        return dir.path + "/" + name;
    };
    Config c;
    c.load_file(write_file("exact.conf", Config::max_file_size));
    CHECK(c.threads() == 3);
    const std::string over = write_file("over.conf", Config::max_file_size + 1);
    CHECK(bad_config_error_of([&] { Config().load_file(over); }) ==
          over + ": is 1048577 bytes; a configuration file must be at most 1 MiB (1048576 bytes)");
    const std::string big = write_file("big.conf", 2 * Config::max_file_size);
    CHECK(bad_config_error_of([&] { Config().load_file(big); }) ==
          big + ": is 2097152 bytes; a configuration file must be at most 1 MiB (1048576 bytes)");
}

TEST_CASE("an error quotes a value with its control and non-ASCII bytes escaped", "[config]")
{
    Config c;
    CHECK(bad_config_error_of([&] { c.load_string("listen_port = \x1b[31m9\xff\n", "e.conf"); }) ==
          "e.conf:1: bad value '\\x1b[31m9\\xff' for 'listen_port': expected an integer 0..65535");
    CHECK(bad_config_error_of([&] { c.set("threads", "it's\\4", "api"); }) ==
          "api: bad value 'it's\\\\4' for 'threads': expected an integer 1..256");
    CHECK(bad_config_error_of([&] { c.load_string("\x07oops\n", "e.conf"); }) ==
          "e.conf:1: expected 'key = value', got '\\x07oops'");
}

TEST_CASE("an error cuts a long value after 64 bytes and gives its length, wherever it came from", "[config]")
{
    // 4 MiB stands for the 64 MB line that once put 67 MB on stderr.
    const std::string value = "\x1b]0;" + std::string(4 * 1024 * 1024, 'x');
    const std::string cut = "'\\x1b]0;" + std::string(60, 'x') + "'... (" + std::to_string(value.size()) + " bytes)";
    Config c;
    std::string e = bad_config_error_of([&] { c.load_string("listen_port = " + value + "\n", "big.conf"); });
    CHECK(short_or_cut(e) == "big.conf:1: bad value " + cut + " for 'listen_port': expected an integer 0..65535");
    e = bad_config_error_of([&] { c.load_string(value + "\n", "big.conf"); });
    CHECK(short_or_cut(e) == "big.conf:1: expected 'key = value', got " + cut);
    e = bad_config_error_of([&] { c.load_string("[" + value + "\n", "big.conf"); });
    CHECK(short_or_cut(e).size() < 200);
    CHECK(printable(short_or_cut(e)));
    e = bad_config_error_of([&] { c.load_string(std::string(100000, 'k') + " = 1\n", "big.conf"); });
    CHECK(short_or_cut(e) == "big.conf:1: unknown key '" + std::string(64, 'k') + "'... (100000 bytes) [code " +
                                 std::to_string(static_cast<int>(twinwire::errc::unknown_config_key)) + "]");
    e = bad_config_error_of([&] { c.set("transport", "tcp," + value, "api"); });
    CHECK(short_or_cut(e).size() < 400);
    CHECK(printable(short_or_cut(e)));
    e = bad_config_error_of([&] { c.set("plugin_path", "/a:" + value, "api"); });
    CHECK(short_or_cut(e).size() < 400);
    CHECK(printable(short_or_cut(e)));
    EnvVar env("TWINWIRE_THREADS", std::string(100000, '7').c_str());
    e = bad_config_error_of([&] { c.load_environment(); });
    CHECK(short_or_cut(e) == "environment TWINWIRE_THREADS: bad value '" + std::string(64, '7') +
                                 "'... (100000 bytes) for 'threads': expected an integer 1..256");
}

TEST_CASE("a copied Config holds its own keys and values: changing one leaves the other as it was", "[config]")
{
    Config original;
    original.define({"app.size", "8", "a size", twinwire::check::integer(1, 100)});
    original.set("listen_port", "7000");
    Config copy = original;
    copy.set("listen_port", "7001");
    copy.define({"app.name", "x", "a name", twinwire::check::any()});
    CHECK(original.listen_port() == 7000);
    CHECK(copy.listen_port() == 7001);
    CHECK(original.find("app.name") == nullptr);
    CHECK(copy.get("app.size") == "8");
    Config assigned;
    assigned = copy;
    copy.set("app.size", "9");
    CHECK(assigned.get("app.size") == "8");
    CHECK(assigned.get("app.name") == "x");
}

TEST_CASE("a moved-from Config is empty and usable again once assigned to", "[config]")
{
    Config from;
    from.set("listen_port", "7000");
    Config to = std::move(from);
    CHECK(to.listen_port() == 7000);
    CHECK(from.entries().empty()); // NOLINT(bugprone-use-after-move): what moving leaves is the point
    CHECK(from.schema().empty());  // NOLINT(bugprone-use-after-move)
    CHECK(from.find("listen_port") == nullptr);
    CHECK_THROWS_AS(from.set("listen_port", "7001"), ConfigError); // no schema: an unknown key
    from = Config();
    from.set("listen_port", "7001");
    CHECK(from.listen_port() == 7001);
    Config again;
    again = std::move(to);
    CHECK(again.listen_port() == 7000);
}
