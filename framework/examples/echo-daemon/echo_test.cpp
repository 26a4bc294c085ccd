// The echo daemon's integration test: the service and its clients in one
// process, over the transport the environment names (TWINWIRE_TRANSPORT; run
// it over each with twinwire-each-transport). Each client sends messages of
// several sizes, ends its stream, and must get back exactly what it sent
// before the service ends its own. Exit 0: every byte came back.
#include "echo_service.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr int kClients = 4;
constexpr size_t kSizes[] = {1, 1000, 64 * 1024, 1024 * 1024};
constexpr std::chrono::seconds kDeadline{120};

std::string payload_for(int client)
{
    std::string bytes;
    for (size_t size : kSizes)
        for (size_t i = 0; i < size; ++i) bytes += static_cast<char>((client * 31 + i * 7 + i / 251) & 0xff);
    return bytes;
}

// What every client saw; callbacks may run on several loops (threads > 1).
struct Results {
    std::mutex mutex;
    int finished = 0;
    std::vector<std::string> failures;
    std::string transport;

    void finish(twinwire::Runtime &runtime, int client, const std::string &failure)
    {
        bool last;
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (!failure.empty()) failures.push_back("client " + std::to_string(client) + ": " + failure);
            last = ++finished == kClients;
        }
        if (last) runtime.stop();
    }
};

void start_client(twinwire::Runtime &runtime, const twinwire::Listener &listener, int client, Results &results)
{
    twinwire::ConnectOptions to(listener.address(), listener.port());
    // In the SoftRoCE guest, binding the client's address makes RDMA cross
    // the guest's wire between its two devices.
    if (const char *source = std::getenv("SOFTROCE_CLIENT_IP")) to.source_address = source;
    runtime.connect(
        to, [&runtime, &results, client](const twinwire::ConnectionPtr &conn, const twinwire::ConnectError &error) {
            if (!conn) return results.finish(runtime, client, "connect failed: " + error.message);
            {
                std::lock_guard<std::mutex> lock(results.mutex);
                results.transport = conn->transport_name();
            }
            auto sent = std::make_shared<std::string>(payload_for(client));
            auto received = std::make_shared<size_t>(0);
            auto failure = std::make_shared<std::string>();
            conn->on_data([sent, received, failure](twinwire::Connection &c, twinwire::Buffer &in) {
                std::string got = in.take(in.size());
                if (failure->empty() && sent->compare(*received, got.size(), got) != 0)
                    *failure = "bytes " + std::to_string(*received) + ".." + std::to_string(*received + got.size()) +
                               " differ from what was sent";
                *received += got.size();
                if (!failure->empty()) c.close();
            });
            conn->on_close([&runtime, &results, client, sent, received, failure](twinwire::Connection &,
                                                                                 const twinwire::CloseInfo &info) {
                std::string why = *failure;
                if (why.empty() && *received != sent->size())
                    why = "got " + std::to_string(*received) + " of " + std::to_string(sent->size()) +
                          " bytes back before the connection ended (" + info.reason + ")";
                results.finish(runtime, client, why);
            });
            if (!conn->write(*sent)) return conn->close();
            conn->shutdown_write();
        });
}

} // namespace

int main()
{
    try {
        twinwire::Config config;
        config.load_environment(); // TWINWIRE_TRANSPORT, TWINWIRE_PLUGIN_PATH, ...
        twinwire::Runtime runtime(config);
        runtime.start();
        auto listener = echo::serve(runtime, {"", 0}); // any free port
        Results results;
        for (int client = 0; client < kClients; ++client) start_client(runtime, *listener, client, results);
        bool timed_out = false;
        twinwire::Timer deadline(runtime.loop(0), [&] {
            timed_out = true;
            runtime.stop(false);
        });
        deadline.start(kDeadline);
        runtime.run();

        std::lock_guard<std::mutex> lock(results.mutex);
        if (timed_out) results.failures.push_back("not done after " + std::to_string(kDeadline.count()) + " s");
        for (const auto &f : results.failures) std::fprintf(stderr, "echo-test: FAIL: %s\n", f.c_str());
        if (!results.failures.empty()) return 1;
        std::printf("echo-test: %d clients got back every byte they sent over %s\n", kClients,
                    results.transport.c_str());
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "echo-test: FAIL: %s\n", e.what());
        return 1;
    }
}
