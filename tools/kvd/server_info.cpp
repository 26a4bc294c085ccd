// SPDX-License-Identifier: MIT
// INFO (with its transport section) and CONFIG GET.
#include "server.hpp"

#include <twinwire/connection.hpp>

#include <malloc.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>

#ifndef KVD_VERSION
#define KVD_VERSION "unknown"
#endif

namespace kvd {
namespace {

// Clients look at redis_version to decide what they may send; we speak
// what Redis 7.0 speaks for the commands we have.
constexpr const char *kCompatibleRedisVersion = "7.0.0";

const char *const kDefaultSections[] = {"server",      "clients", "memory",    "persistence", "stats",
                                        "replication", "cpu",     "transport", "keyspace"};

// Clients read a value holding ',' and '=' as a "k=v,k=v" list (redis-py's
// parse_info raises ValueError on free text such as transport_reason), and a
// line break would end the field: free text has its commas written as ';'.
void field(std::string &out, const char *name, const std::string &value)
{
    out += name;
    out += ':';
    for (char c : value) out += (c == '\r' || c == '\n') ? ' ' : c == ',' ? ';' : c;
    out += "\r\n";
}

void seconds_field(std::string &out, const char *name, double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.6f", value);
    field(out, name, std::string(text));
}

double seconds(const timeval &t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

/// Resident bytes of this process (/proc/self/statm), 0 when unreadable.
uint64_t resident_bytes()
{
    unsigned long pages = 0, resident = 0;
    FILE *f = std::fopen("/proc/self/statm", "r");
    if (!f) return 0;
    int n = std::fscanf(f, "%lu %lu", &pages, &resident);
    std::fclose(f);
    return n == 2 ? static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

void field(std::string &out, const char *name, uint64_t value) { field(out, name, std::to_string(value)); }

std::string lower(std::string_view text)
{
    std::string s(text);
    for (char &c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

void connection_fields(std::string &out, const twinwire::Connection &conn)
{
    field(out, "client_transport", conn.transport_name());
    field(out, "client_peer", conn.peer_address());
    if (!conn.fallback_reason().empty()) field(out, "client_fallback_reason", conn.fallback_reason());
    tw_conn_stats s = conn.stats();
    field(out, "client_bytes_sent", s.bytes_sent);
    field(out, "client_bytes_received", s.bytes_received);
    field(out, "client_messages_sent", s.messages_sent);
    field(out, "client_messages_received", s.messages_received);
    field(out, "client_write_would_block", s.write_would_block);
    field(out, "client_credit_stalls", s.credit_stalls);
    field(out, "client_rnr_retries", s.rnr_retries);
    field(out, "client_cq_events", s.cq_events);
    field(out, "client_pool_exhausted", s.pool_exhausted);
    field(out, "client_zero_copy_sends", s.zero_copy_sends);
    field(out, "client_zero_copy_recvs", s.zero_copy_recvs);
    field(out, "client_control_sent", s.control_sent);
    field(out, "client_control_received", s.control_received);
}

} // namespace

void Server::info_section(const std::string &name, const Session &caller, std::string &out)
{
    const twinwire::Config &config = runtime_.config();
    if (name == "server") {
        struct utsname uts;
        uname(&uts);
        int64_t uptime = (MonotonicClock().now_ms() - started_ms_) / 1000;
        out += "# Server\r\n";
        field(out, "redis_version", kCompatibleRedisVersion);
        field(out, "kvd_version", KVD_VERSION);
        field(out, "redis_mode", "standalone");
        field(out, "os", std::string(uts.sysname) + " " + uts.release + " " + uts.machine);
        field(out, "arch_bits", sizeof(void *) * 8);
        field(out, "process_id", static_cast<uint64_t>(getpid()));
        field(out, "tcp_port", port());
        field(out, "uptime_in_seconds", static_cast<uint64_t>(uptime));
        field(out, "uptime_in_days", static_cast<uint64_t>(uptime / 86400));
        field(out, "threads", runtime_.loop_count());
        field(out, "config_file", config_file_);
    } else if (name == "clients") {
        out += "# Clients\r\n";
        field(out, "connected_clients", clients_.load());
        field(out, "maxclients", settings_.maxclients);
        field(out, "blocked_clients", static_cast<uint64_t>(0)); // no blocking commands
    } else if (name == "memory") {
        struct mallinfo2 m = mallinfo2(); // what the allocator hands out, as Redis' used_memory
        uint64_t used = static_cast<uint64_t>(m.uordblks + m.hblkhd);
        uint64_t rss = resident_bytes();
        // An allocator that does not fill mallinfo2 (the sanitizers' own)
        // reports 0: the resident set is then the best figure there is.
        if (used == 0) used = rss;
        out += "# Memory\r\n";
        field(out, "used_memory", used);
        field(out, "used_memory_rss", rss);
        field(out, "maxmemory", static_cast<uint64_t>(0));
        field(out, "maxmemory_policy", "noeviction");
    } else if (name == "persistence") {
        // Nothing is saved or loaded; redis-cli --stat reads these to fill its "child" column.
        out += "# Persistence\r\n";
        field(out, "loading", static_cast<uint64_t>(0));
        field(out, "rdb_bgsave_in_progress", static_cast<uint64_t>(0));
        field(out, "aof_enabled", static_cast<uint64_t>(0));
        field(out, "aof_rewrite_in_progress", static_cast<uint64_t>(0));
    } else if (name == "replication") {
        out += "# Replication\r\n";
        field(out, "role", "master");
        field(out, "connected_slaves", static_cast<uint64_t>(0));
    } else if (name == "cpu") {
        struct rusage self, children;
        getrusage(RUSAGE_SELF, &self);
        getrusage(RUSAGE_CHILDREN, &children);
        out += "# CPU\r\n";
        seconds_field(out, "used_cpu_sys", seconds(self.ru_stime));
        seconds_field(out, "used_cpu_user", seconds(self.ru_utime));
        seconds_field(out, "used_cpu_sys_children", seconds(children.ru_stime));
        seconds_field(out, "used_cpu_user_children", seconds(children.ru_utime));
    } else if (name == "stats") {
        out += "# Stats\r\n";
        field(out, "total_connections_received", total(&LoopStats::accepted));
        field(out, "total_commands_processed", total_session(&SessionCounters::commands));
        field(out, "rejected_connections", rejected_.load());
        field(out, "expired_keys", keyspace_.expired_total());
        field(out, "protocol_errors", total_session(&SessionCounters::protocol_errors));
        field(out, "replies_over_limit", total_session(&SessionCounters::replies_too_large));
        field(out, "clients_out_of_memory", total_session(&SessionCounters::out_of_memory));
    } else if (name == "transport") {
        out += "# Transport\r\n";
        field(out, "transport", runtime_.transport_name());
        field(out, "transport_reason", runtime_.transport_reason());
        field(out, "transport_mode", config.get("transport"));
        field(out, "listening",
              config.listen_address() + ":" + std::to_string(port()) + " over " + listening_transports());
        for (const auto &t : clients_by_transport_)
            field(out, ("connected_clients_" + t.first).c_str(), static_cast<uint64_t>(t.second->load()));
        if (caller.connection) connection_fields(out, *caller.connection);
    } else if (name == "keyspace") {
        out += "# Keyspace\r\n";
        size_t keys = keyspace_.size();
        if (keys > 0)
            out += "db0:keys=" + std::to_string(keys) + ",expires=" + std::to_string(keyspace_.volatile_size()) +
                   ",avg_ttl=0\r\n";
    }
}

std::string Server::info(const std::vector<std::string_view> &sections, const Session &caller)
{
    std::vector<std::string> wanted;
    for (std::string_view s : sections) {
        std::string name = lower(s);
        if (name == "default" || name == "all" || name == "everything")
            wanted.insert(wanted.end(), std::begin(kDefaultSections), std::end(kDefaultSections));
        else wanted.push_back(name);
    }
    if (sections.empty()) wanted.assign(std::begin(kDefaultSections), std::end(kDefaultSections));
    std::string out;
    for (const std::string &name : wanted) {
        size_t before = out.size();
        if (before > 0) out += "\r\n";
        size_t header = out.size();
        info_section(name, caller, out);
        if (out.size() == header) out.resize(before); // unknown section: nothing, as Redis
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> Server::config_parameters()
{
    const twinwire::Config &config = runtime_.config();
    // The names Redis tools ask for (redis-benchmark reads save and
    // appendonly), then every twinwire key as it is spelt in the config file.
    std::vector<std::pair<std::string, std::string>> out = {
        {"port", std::to_string(port())},
        {"bind", config.listen_address()},
        {"maxclients", std::to_string(settings_.maxclients)},
        {"databases", "1"},
        {"save", ""},
        {"appendonly", "no"},
        {"proto-max-bulk-len", std::to_string(settings_.limits.max_request)},
        {"io-threads", std::to_string(runtime_.loop_count())},
    };
    for (const auto &entry : config.entries()) out.emplace_back(entry.first, entry.second.value);
    return out;
}

} // namespace kvd
