// SPDX-License-Identifier: MIT
#include "resp_report.hpp"

#include "connection_summary.hpp"
#include "json_writer.hpp"
#include "text.hpp"

namespace twinwire::bench {
namespace {

double ms(uint64_t ns) { return double(ns) / 1e6; }

} // namespace

uint64_t RespResult::error_count() const
{
    // Every request that did not get a good reply is an error.
    uint64_t missing = requested > replies ? requested - replies : 0;
    return missing > error_replies ? missing : error_replies;
}

uint64_t RespReport::error_count() const
{
    uint64_t n = 0;
    for (const RespResult &r : results) n += r.error_count();
    return n;
}

std::string resp_table(const RespReport &r)
{
    std::string out = "twinwire-bench resp -> " + r.target + "\n";
    out += transport_lines(r.transport, r.transport_reason, r.connections);
    out += strprintf("clients %u, pipeline %u, data size %zu, keyspace %llu\n\n", r.clients, r.pipeline, r.data_size,
                     (unsigned long long)r.keyspace);
    out += strprintf("%-6s %11s %12s %9s %9s %9s %9s %9s %8s\n", "test", "requests", "requests/s", "mean_ms", "p50_ms",
                     "p99_ms", "p99.9_ms", "max_ms", "errors");
    for (const RespResult &t : r.results) {
        const Histogram &h = t.latency_ns;
        out += strprintf("%-6s %11llu %12.0f %9.3f %9.3f %9.3f %9.3f %9.3f %8llu\n", t.test.c_str(),
                         (unsigned long long)(t.replies + t.error_replies), t.requests_per_s(), h.mean() / 1e6,
                         ms(h.percentile(0.5)), ms(h.percentile(0.99)), ms(h.percentile(0.999)), ms(h.max()),
                         (unsigned long long)t.error_count());
    }
    for (const RespResult &t : r.results)
        for (const std::string &e : t.errors) out += "  error (" + t.test + "): " + e + "\n";
    if (r.interrupted) out += "\ninterrupted (SIGINT): the remaining tests did not run\n";
    return out;
}

std::string resp_json(const RespReport &r)
{
    JsonWriter j;
    j.begin_object();
    j.key("tool").value("twinwire-bench");
    json_metadata(j, r.meta);
    j.key("mode").value("resp").key("target").value(r.target);
    j.key("transport").value(r.transport).key("transport_reason").value(r.transport_reason);
    json_connections(j, r.connections);
    j.key("clients").value(r.clients).key("pipeline").value(r.pipeline);
    j.key("data_size").value(uint64_t(r.data_size)).key("keyspace").value(r.keyspace);
    j.key("tests").begin_array();
    for (const RespResult &t : r.results) {
        const Histogram &h = t.latency_ns;
        j.begin_object().key("test").value(t.test).key("requested").value(t.requested);
        j.key("replies").value(t.replies).key("error_replies").value(t.error_replies);
        j.key("seconds").value(t.seconds).key("requests_per_s").value(t.requests_per_s());
        j.key("mean_ms").value(h.mean() / 1e6).key("p50_ms").value(ms(h.percentile(0.5)));
        j.key("p99_ms").value(ms(h.percentile(0.99))).key("p999_ms").value(ms(h.percentile(0.999)));
        j.key("max_ms").value(ms(h.max())).key("errors").value(t.error_count());
        j.key("error_messages").begin_array();
        for (const std::string &e : t.errors) j.value(e);
        j.end_array().end_object();
    }
    j.end_array();
    j.key("interrupted").value(r.interrupted).key("errors").value(r.error_count());
    j.end_object();
    return j.text() + "\n";
}

std::string resp_csv(const RespReport &r)
{
    std::string out = "test,requests,requests_per_s,mean_ms,p50_ms,p99_ms,p999_ms,max_ms,errors\n";
    for (const RespResult &t : r.results) {
        const Histogram &h = t.latency_ns;
        out += strprintf("%s,%llu,%.1f,%.4f,%.4f,%.4f,%.4f,%.4f,%llu\n", t.test.c_str(),
                         (unsigned long long)(t.replies + t.error_replies), t.requests_per_s(), h.mean() / 1e6,
                         ms(h.percentile(0.5)), ms(h.percentile(0.99)), ms(h.percentile(0.999)), ms(h.max()),
                         (unsigned long long)t.error_count());
    }
    return out;
}

} // namespace twinwire::bench
