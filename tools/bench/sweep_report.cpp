// SPDX-License-Identifier: MIT
#include "sweep_report.hpp"

#include "connection_summary.hpp"
#include "json_writer.hpp"
#include "text.hpp"

namespace twinwire::bench {
namespace {

double us(uint64_t ns) { return double(ns) / 1000.0; }

void list_errors(std::string &out, const std::string &what, const std::vector<std::string> &errors)
{
    for (const std::string &e : errors) out += "  error (" + what + "): " + e + "\n";
}

// The counters that explain a figure: how often the sender waited, how many
// completion events and control messages it took.
void json_stats(JsonWriter &j, const tw_conn_stats &s)
{
    j.key("transport_stats").begin_object();
    j.key("bytes_sent").value(s.bytes_sent).key("bytes_received").value(s.bytes_received);
    j.key("messages_sent").value(s.messages_sent).key("messages_received").value(s.messages_received);
    j.key("write_would_block").value(s.write_would_block).key("credit_stalls").value(s.credit_stalls);
    j.key("rnr_retries").value(s.rnr_retries).key("cq_events").value(s.cq_events);
    j.key("pool_exhausted").value(s.pool_exhausted);
    j.key("zero_copy_sends").value(s.zero_copy_sends).key("zero_copy_recvs").value(s.zero_copy_recvs);
    j.key("control_sent").value(s.control_sent).key("control_received").value(s.control_received);
    j.end_object();
}

// Registered memory and ring sizes (RDMA only): what adaptive rings did.
void json_rings(JsonWriter &j, const RingsSummary &r)
{
    if (!r.present) return;
    j.key("rings").begin_object();
    j.key("registered_bytes").value(r.registered).key("rx_ring").value(r.rx_ring).key("tx_ring").value(r.tx_ring);
    j.key("rx_grows").value(r.rx_grows).key("tx_grows").value(r.tx_grows);
    j.key("window_waits").value(r.window_waits);
    j.end_object();
}

void json_errors(JsonWriter &j, const std::vector<std::string> &errors)
{
    j.key("errors").begin_array();
    for (const std::string &e : errors) j.value(e);
    j.end_array();
}

// One line per test when any ran zero-copy (or was asked to and fell back).
void list_paths(std::string &out, const SweepReport &r)
{
    bool any = false;
    for (const auto &l : r.latency) any |= l.io_path != "copy";
    for (const auto &t : r.throughput) any |= t.io_path != "copy";
    if (!any) return;
    out += "\nI/O path (client side; the server follows the client's hello)\n";
    for (const auto &l : r.latency) out += "  latency " + format_size(l.size) + ": " + l.io_path + "\n";
    for (const auto &t : r.throughput) out += "  throughput " + format_size(t.size) + ": " + t.io_path + "\n";
}

} // namespace

std::string io_path(bool zero_copy_requested, const tw_conn_stats &s)
{
    if (!zero_copy_requested) return "copy";
    if (s.zero_copy_sends && s.zero_copy_recvs) return "zero-copy";
    if (!s.zero_copy_sends && !s.zero_copy_recvs)
        return "copy (zero-copy asked for; fell back: the transport lent no send or receive buffers)";
    return s.zero_copy_sends ? "zero-copy sends, copied receives (fell back: the transport lent no receive buffers)"
                             : "zero-copy receives, copied sends (fell back: the transport lent no send buffers)";
}

size_t SweepReport::error_count() const
{
    size_t n = 0;
    for (const auto &r : latency) n += r.errors.size();
    for (const auto &r : throughput) n += r.errors.size();
    return n;
}

std::string sweep_table(const SweepReport &r)
{
    std::string out = "twinwire-bench " + r.mode + " -> " + r.target + "\n";
    out += transport_lines(r.transport, r.transport_reason, r.connections);
    if (!r.latency.empty()) {
        // perftest and sockperf report one way (half the round trip): both are shown, labelled.
        out += "\nlatency (us): rt = round trip; ow = one way = rt / 2, as perftest and sockperf report it\n";
        out += strprintf("%-9s %5s %11s %9s  %8s %8s %8s %8s %8s %8s  %8s %8s %8s %8s\n", "size", "conns",
                         "round_trips", "rt/s", "rt_mean", "rt_p50", "rt_p99", "rt_p99.9", "rt_min", "rt_max",
                         "ow_mean", "ow_p50", "ow_p99", "ow_p99.9");
        for (const LatencyResult &l : r.latency) {
            const Histogram &h = l.round_trip_ns;
            double rate = l.seconds > 0 ? double(h.count()) / l.seconds : 0;
            out += strprintf("%-9s %5u %11llu %9.0f  %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f  %8.2f %8.2f %8.2f %8.2f\n",
                             format_size(l.size).c_str(), l.connections, (unsigned long long)h.count(), rate,
                             h.mean() / 1000.0, us(h.percentile(0.5)), us(h.percentile(0.99)), us(h.percentile(0.999)),
                             us(h.min()), us(h.max()), h.mean() / 2000.0, us(h.percentile(0.5)) / 2,
                             us(h.percentile(0.99)) / 2, us(h.percentile(0.999)) / 2);
        }
        for (const LatencyResult &l : r.latency) list_errors(out, "latency " + format_size(l.size), l.errors);
    }
    if (!r.throughput.empty()) {
        const bool both = r.throughput.front().bidirectional;
        out += std::string("\nthroughput (") +
               (both ? "both directions at once, summed as ib_write_bw -b reports" : "one direction") +
               "; MB = 2^20 bytes as perftest counts, Gb = 10^9 bits as links count)\n";
        out += strprintf("%-9s %5s %12s %10s %12s %14s %9s\n", "size", "conns", "MB/s", "Gb/s", "msgs/s", "bytes",
                         "seconds");
        for (const ThroughputResult &t : r.throughput)
            out += strprintf("%-9s %5u %12.2f %10.3f %12.0f %14llu %9.3f\n", format_size(t.size).c_str(), t.connections,
                             t.mb_per_s(), t.gbit_per_s(), t.messages_per_s(), (unsigned long long)t.bytes, t.seconds);
        for (const ThroughputResult &t : r.throughput) list_errors(out, "throughput " + format_size(t.size), t.errors);
    }
    list_paths(out, r);
    if (r.interrupted) out += "\ninterrupted (SIGINT): the remaining tests did not run\n";
    return out;
}

std::string sweep_json(const SweepReport &r)
{
    JsonWriter j;
    j.begin_object();
    j.key("tool").value("twinwire-bench");
    json_metadata(j, r.meta);
    j.key("mode").value(r.mode).key("target").value(r.target);
    j.key("transport").value(r.transport).key("transport_reason").value(r.transport_reason);
    j.key("threads").value(r.threads);
    json_connections(j, r.connections);
    j.key("latency").begin_array();
    for (const LatencyResult &l : r.latency) {
        const Histogram &h = l.round_trip_ns;
        j.begin_object().key("size").value(uint64_t(l.size)).key("connections").value(l.connections);
        j.key("round_trips").value(h.count()).key("seconds").value(l.seconds);
        j.key("round_trips_per_s").value(l.seconds > 0 ? double(h.count()) / l.seconds : 0.0);
        j.key("mean_us").value(h.mean() / 1000.0).key("p50_us").value(us(h.percentile(0.5)));
        j.key("p99_us").value(us(h.percentile(0.99))).key("p999_us").value(us(h.percentile(0.999)));
        j.key("min_us").value(us(h.min())).key("max_us").value(us(h.max()));
        j.key("one_way_mean_us").value(h.mean() / 2000.0).key("one_way_p50_us").value(us(h.percentile(0.5)) / 2);
        j.key("one_way_p99_us").value(us(h.percentile(0.99)) / 2);
        j.key("one_way_p999_us").value(us(h.percentile(0.999)) / 2);
        j.key("io_path").value(l.io_path);
        json_stats(j, l.stats);
        json_rings(j, l.rings);
        json_errors(j, l.errors);
        j.end_object();
    }
    j.end_array();
    j.key("throughput").begin_array();
    for (const ThroughputResult &t : r.throughput) {
        j.begin_object().key("size").value(uint64_t(t.size)).key("connections").value(t.connections);
        j.key("bytes").value(t.bytes).key("messages").value(t.messages).key("seconds").value(t.seconds);
        j.key("mb_per_s").value(t.mb_per_s()).key("gbit_per_s").value(t.gbit_per_s());
        j.key("messages_per_s").value(t.messages_per_s()).key("bidirectional").value(t.bidirectional);
        j.key("io_path").value(t.io_path);
        json_stats(j, t.stats);
        json_rings(j, t.rings);
        json_errors(j, t.errors);
        j.end_object();
    }
    j.end_array();
    j.key("interrupted").value(r.interrupted);
    j.key("errors").value(uint64_t(r.error_count()));
    j.end_object();
    return j.text() + "\n";
}

} // namespace twinwire::bench

namespace twinwire::bench {

namespace {
// The fallback texts hold commas: quote them (RFC 4180).
std::string csv_field(const std::string &s) { return s.find(',') == std::string::npos ? s : "\"" + s + "\""; }
} // namespace

std::string sweep_csv(const SweepReport &r)
{
    std::string out = "test,size,connections,count,seconds,rate_per_s,rt_mean_us,rt_p50_us,rt_p99_us,rt_p999_us,"
                      "rt_min_us,rt_max_us,one_way_mean_us,one_way_p50_us,one_way_p99_us,one_way_p999_us,mb_per_s,"
                      "gbit_per_s,bytes,errors,io_path\n";
    for (const LatencyResult &l : r.latency) {
        const Histogram &h = l.round_trip_ns;
        out += strprintf("latency,%zu,%u,%llu,%.6f,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,,,,%zu,%s\n",
                         l.size, l.connections, (unsigned long long)h.count(), l.seconds,
                         l.seconds > 0 ? double(h.count()) / l.seconds : 0.0, h.mean() / 1000.0, us(h.percentile(0.5)),
                         us(h.percentile(0.99)), us(h.percentile(0.999)), us(h.min()), us(h.max()), h.mean() / 2000.0,
                         us(h.percentile(0.5)) / 2, us(h.percentile(0.99)) / 2, us(h.percentile(0.999)) / 2,
                         l.errors.size(), csv_field(l.io_path).c_str());
    }
    for (const ThroughputResult &t : r.throughput)
        out += strprintf("throughput,%zu,%u,%llu,%.6f,%.1f,,,,,,,,,,,%.3f,%.4f,%llu,%zu,%s\n", t.size, t.connections,
                         (unsigned long long)t.messages, t.seconds, t.messages_per_s(), t.mb_per_s(), t.gbit_per_s(),
                         (unsigned long long)t.bytes, t.errors.size(), csv_field(t.io_path).c_str());
    return out;
}

} // namespace twinwire::bench
