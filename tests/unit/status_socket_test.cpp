// SPDX-License-Identifier: MIT
// Runtime::status and status_socket: the transports of a running runtime,
// where each listens and how many connections it holds, read in-process and
// over the Unix socket twinwire-info --status reads.
#include "tcp_config.hpp"

#include <twinwire/error.hpp>
#include <twinwire/runtime.hpp>

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

using namespace twinwire;
using namespace std::chrono_literals;

namespace {

struct StatusDir {
    std::string path;
    StatusDir()
    {
        char tmpl[] = "/tmp/tw-status-XXXXXX";
        REQUIRE(mkdtemp(tmpl));
        path = tmpl;
    }
    ~StatusDir() { (void)std::system(("rm -rf " + path).c_str()); }
};

// What a reader of the socket gets: the whole answer, then the end.
std::string ask(const std::string &path)
{
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    std::strncpy(un.sun_path, path.c_str(), sizeof un.sun_path - 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<sockaddr *>(&un), sizeof un) != 0) {
        close(fd);
        return "connect: " + std::string(strerror(errno));
    }
    std::string text;
    char buf[512];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    close(fd);
    return text;
}

// The socket is served on loop 0, which is this thread's: ask from
// another thread while the loop runs.
std::string ask(Runtime &rt, const std::string &path)
{
    std::atomic<bool> done{false};
    std::string text;
    std::thread reader([&] {
        text = ask(path);
        done = true;
    });
    bool answered = rt.loop(0).run_until([&] { return done.load(); }, 20s);
    reader.join();
    CHECK(answered);
    return text;
}

size_t tcp_connections(const Runtime &rt)
{
    for (const TransportStatus &st : rt.status())
        if (st.name == "tcp") return st.connections;
    return SIZE_MAX;
}

} // namespace

TEST_CASE("Runtime::status counts each transport's connections and names where it listens; status_socket answers "
          "the same, owner-only, and is removed at the end",
          "[runtime][status]")
{
    StatusDir dir;
    const std::string path = dir.path + "/status";
    Config config = tcp_config(2);
    config.set("status_socket", path);
    std::atomic<bool> stop{false};
    std::string answer;
    std::vector<TransportStatus> seen;
    {
        Runtime rt(config);
        rt.start();
        auto listener = rt.listen({}, [](const ConnectionPtr &) {});
        const std::string where = "127.0.0.1:" + std::to_string(listener->port());
        std::vector<ConnectionPtr> clients;
        std::mutex mutex;
        for (int i = 0; i < 3; ++i)
            rt.connect({"127.0.0.1", listener->port()}, [&](const ConnectionPtr &c, const ConnectError &) {
                std::lock_guard<std::mutex> lock(mutex);
                if (c) clients.push_back(c);
            });
        // Three connected, three accepted: six tcp connections in this process.
        bool counted = rt.loop(0).run_until([&] { return tcp_connections(rt) == 6; }, 20s);
        CHECK(counted);
        seen = rt.status();
        answer = ask(rt, path);
        struct stat st {};
        REQUIRE(lstat(path.c_str(), &st) == 0);
        CHECK(S_ISSOCK(st.st_mode));
        CHECK((st.st_mode & 077) == 0);
        REQUIRE(seen.size() == 1);
        CHECK(seen[0].name == "tcp");
        CHECK(seen[0].listening == std::vector<std::string>{where});
        CHECK(answer.find("twinwire-status 1\n") == 0);
        CHECK(answer.find("\nconnections 6\n") != std::string::npos);
        CHECK(answer.find("\ntransport tcp connections=6 listening=" + where + "\n") != std::string::npos);
        {
            std::lock_guard<std::mutex> lock(mutex);
            // Each on its own loop's thread, as close() wants.
            for (auto &c : clients) c->loop().post([c] { c->close(); });
            clients.clear();
        }
        CHECK(rt.loop(0).run_until([&] { return tcp_connections(rt) == 0; }, 20s));
        CHECK(ask(rt, path).find("\ntransport tcp connections=0 listening=" + where + "\n") != std::string::npos);
        listener->close();
        CHECK(rt.loop(0).run_until([&] { return rt.status().at(0).listening.empty(); }, 20s));
        rt.stop(false);
        rt.run();
    }
    struct stat st {};
    CHECK(lstat(path.c_str(), &st) != 0); // removed with the runtime
}

TEST_CASE("status_socket replaces a stale socket file, and refuses a live one, a file of another kind and a "
          "missing directory, naming the key and why",
          "[runtime][status]")
{
    StatusDir dir;
    const std::string path = dir.path + "/status";
    auto start_with = [](const std::string &where) {
        Config config = tcp_config(1);
        config.set("status_socket", where);
        auto rt = std::make_unique<Runtime>(config);
        rt->start();
        return rt;
    };
    // A socket file nobody answers on (a daemon that was killed).
    int stale = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    std::strncpy(un.sun_path, path.c_str(), sizeof un.sun_path - 1);
    REQUIRE(bind(stale, reinterpret_cast<sockaddr *>(&un), sizeof un) == 0);
    close(stale);
    auto first = start_with(path);
    CHECK(ask(*first, path).find("twinwire-status 1\n") == 0);

    try {
        start_with(path);
        FAIL("a second runtime took a status socket another one answers on");
    } catch (const StartupError &e) {
        CHECK(std::string(e.what()) == "status_socket = " + path +
                                           ": another process answers there (a second daemon with the same "
                                           "configuration?)");
        CHECK(e.code() == errc::bad_config);
    }
    first.reset();

    std::ofstream(path) << "not a socket\n";
    CHECK_THROWS_WITH(start_with(path), "status_socket = " + path + ": exists and is not a socket");
    CHECK_THROWS_WITH(start_with(dir.path + "/missing/status"),
                      "status_socket = " + dir.path +
                          "/missing/status: bind: No such file or directory (does its directory exist?)");
}

TEST_CASE("status_socket must be an absolute path a Unix socket can have", "[runtime][status]")
{
    Config config;
    CHECK_THROWS_WITH(config.set("status_socket", "run/status"), Catch::Contains("expected an absolute path"));
    CHECK_THROWS_WITH(config.set("status_socket", "/" + std::string(120, 'x')),
                      Catch::Contains("expected at most 107 characters"));
    CHECK_NOTHROW(config.set("status_socket", ""));
}
