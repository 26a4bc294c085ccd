// SPDX-License-Identifier: MIT
// Certificates that change without a restart: Runtime::reload_credentials
// with a live tls listener.  An open connection keeps its session, a new one
// gets the new certificate, and a reload whose files are bad keeps the old
// credentials and says why.  Certificates: TLS_TEST_CERTS (run_with_certs.sh).
#include <twinwire/runtime.hpp>
#include <twinwire/tls.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;
using twinwire::Buffer;
using twinwire::Connection;
using twinwire::ConnectionPtr;
constexpr auto kWait = std::chrono::seconds(30); // TSan on a busy machine

fs::path certs() { return std::getenv("TLS_TEST_CERTS"); }

// The files the configuration names; each step copies others over them.
struct LiveFiles {
    fs::path dir = fs::path(certs()) / "live";
    LiveFiles() { fs::create_directories(dir); }
    fs::path cert() const { return dir / "cert.pem"; }
    fs::path key() const { return dir / "cert.key"; }
    void use(const char *cert_name, const char *key_name) const
    {
        fs::copy_file(certs() / cert_name, cert(), fs::copy_options::overwrite_existing);
        fs::copy_file(certs() / key_name, key(), fs::copy_options::overwrite_existing);
    }
};

// A client on the runtime's loop, driven from the test's thread.
struct Client {
    std::mutex mutex;
    std::condition_variable changed;
    ConnectionPtr conn;
    size_t lines = 0;
    bool closed = false;
    std::string error;
    std::string peer_subject; ///< the server's certificate, as this client's session saw it
    bool resumed = false;

    template <class Pred> bool wait(Pred pred)
    {
        std::unique_lock<std::mutex> lock(mutex);
        return changed.wait_for(lock, kWait, pred);
    }
};

std::shared_ptr<Client> connect(twinwire::Runtime &runtime, uint16_t port)
{
    auto client = std::make_shared<Client>();
    runtime.connect({"127.0.0.1", port}, [client](const ConnectionPtr &c, const twinwire::ConnectError &e) {
        std::lock_guard<std::mutex> lock(client->mutex);
        if (!c) {
            client->error = e.message;
            client->closed = true;
            client->changed.notify_all();
            return;
        }
        tw_tls_session s{};
        s.size = sizeof s;
        if (c->transport_ctrl("tls", TW_TLS_CTRL_SESSION, &s, sizeof s) == 0) {
            client->peer_subject = s.peer_subject;
            client->resumed = s.resumed != 0;
        }
        c->on_data([client](Connection &, Buffer &in) {
            std::lock_guard<std::mutex> lock(client->mutex);
            for (size_t at = in.find("\n"); at != std::string::npos; at = in.find("\n")) {
                in.drain(at + 1);
                client->lines++;
            }
            client->changed.notify_all();
        });
        c->on_close([client](Connection &, const twinwire::CloseInfo &info) {
            std::lock_guard<std::mutex> lock(client->mutex);
            client->closed = true;
            client->error = info.reason;
            client->changed.notify_all();
        });
        client->conn = c;
        client->changed.notify_all();
    });
    REQUIRE(client->wait([&] { return client->conn || client->closed; }));
    INFO(client->error);
    REQUIRE(client->conn);
    return client;
}

// One line there and back on the client's open connection.
bool echoes(twinwire::Runtime &runtime, const std::shared_ptr<Client> &client)
{
    size_t before;
    {
        std::lock_guard<std::mutex> lock(client->mutex);
        before = client->lines;
    }
    runtime.loop(0).post([client] { client->conn->write(std::string("still here\n")); });
    return client->wait([&] { return client->lines > before || client->closed; }) && client->lines > before;
}

struct Server {
    LiveFiles files;
    std::unique_ptr<twinwire::Runtime> runtime;
    std::shared_ptr<twinwire::Listener> listener;
    std::thread thread;

    Server()
    {
        files.use("server.pem", "server.key");
        twinwire::Config config;
        config.load_environment(); // TWINWIRE_PLUGIN_PATH
        config.set("transport", "tls");
        config.set("threads", "1");
        config.set("tls.cert_file", files.cert().string());
        config.set("tls.key_file", files.key().string());
        config.set("tls.ca_file", (certs() / "ca.pem").string());
        runtime = std::make_unique<twinwire::Runtime>(config);
        runtime->start();
        listener = runtime->listen({"127.0.0.1", 0}, [](const ConnectionPtr &c) {
            c->on_data([](Connection &conn, Buffer &in) { conn.write(in); });
            c->on_eof([](Connection &conn) { conn.close(); });
        });
        thread = std::thread([this] { runtime->run(); });
    }
    ~Server()
    {
        runtime->stop(false);
        thread.join();
    }
    uint16_t port() const { return listener->port(); }

    twinwire::CredentialsReload reload()
    {
        auto results = runtime->reload_credentials();
        REQUIRE(results.size() == 1);
        CHECK(results[0].transport == "tls");
        return results[0];
    }
};

} // namespace

TEST_CASE("a reload puts new certificates in use for new handshakes; open connections keep their sessions", "[tls]")
{
    Server server;
    auto before = connect(*server.runtime, server.port());
    CHECK(before->peer_subject == "CN=localhost");
    REQUIRE(echoes(*server.runtime, before));

    server.files.use("renewed.pem", "renewed.key");
    auto r = server.reload();
    INFO(r.message);
    CHECK(r.ok);
    CHECK(r.message.find("CN=renewed") != std::string::npos);

    // The connection made before the reload goes on with what it had.
    CHECK(echoes(*server.runtime, before));
    CHECK(before->peer_subject == "CN=localhost");
    // A new one sees the renewed certificate: a session of the old
    // credentials is not resumed (the new context has its own ticket keys).
    auto after = connect(*server.runtime, server.port());
    CHECK(after->peer_subject == "CN=renewed");
    CHECK_FALSE(after->resumed);
    CHECK(echoes(*server.runtime, after));
    CHECK(server.runtime->transport("tls")->describe().find("reloads=1 failed=0") != std::string::npos);
}

TEST_CASE("a reload whose files are bad keeps the credentials in use and says which file and why", "[tls]")
{
    Server server;
    auto open = connect(*server.runtime, server.port());

    SECTION("a certificate file that is not PEM")
    {
        std::ofstream(server.files.cert(), std::ios::trunc) << "not a certificate\n";
        auto r = server.reload();
        INFO(r.message);
        CHECK_FALSE(r.ok);
        CHECK(r.message.find("tls.cert_file = '" + server.files.cert().string() + "'") != std::string::npos);
        CHECK(r.message.find("is not a PEM certificate chain") != std::string::npos);
    }
    SECTION("a key that belongs to another certificate")
    {
        server.files.use("renewed.pem", "server.key");
        auto r = server.reload();
        INFO(r.message);
        CHECK_FALSE(r.ok);
        CHECK(r.message.find("tls.key_file = '" + server.files.key().string() + "' does not belong to tls.cert_file") !=
              std::string::npos);
    }
    SECTION("a certificate file that has gone")
    {
        fs::remove(server.files.cert());
        auto r = server.reload();
        INFO(r.message);
        CHECK_FALSE(r.ok);
        CHECK(r.message.find("tls.cert_file") != std::string::npos);
    }
    // The old certificate still serves, new connections and old alike.
    CHECK(echoes(*server.runtime, open));
    auto next = connect(*server.runtime, server.port());
    CHECK(next->peer_subject == "CN=localhost");
    CHECK(echoes(*server.runtime, next));
    std::string described = server.runtime->transport("tls")->describe();
    INFO(described);
    CHECK(described.find("reloads=0 failed=1 (last: tls.") != std::string::npos);
}
