// SPDX-License-Identifier: MIT
#include "settings.hpp"

#include <stacked_loop.hpp>

#include <twinwire/errors.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace fault {
namespace {

struct Bad : std::runtime_error {
    using std::runtime_error::runtime_error;
};

const char *kNoOrigin = "unset";

// One key's text and where it came from; nullptr when unset.
struct Key {
    const tw_host *host;
    const char *name;
    const char *value = nullptr;
    const char *origin = kNoOrigin;
    Key(const tw_host *h, const char *n) : host(h), name(n) { value = host->config_get(host, name, &origin); }
    [[noreturn]] void bad(const std::string &expected) const
    {
        throw Bad(std::string(name) + " = '" + value + "' (" + (origin ? origin : kNoOrigin) + "): expected " +
                  expected);
    }
};

uint64_t parse_uint(const Key &k, uint64_t max, bool sizes)
{
    const char *s = k.value;
    if (!*s || *s == '-' || *s == '+' || *s == ' ') k.bad(sizes ? "a size (bytes, k, M, G)" : "a whole number");
    errno = 0;
    char *end = nullptr;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) k.bad(sizes ? "a size (bytes, k, M, G)" : "a whole number");
    unsigned long long mult = 1;
    if (sizes && *end) {
        if (!strcmp(end, "k") || !strcmp(end, "K")) mult = 1ull << 10;
        else if (!strcmp(end, "M")) mult = 1ull << 20;
        else if (!strcmp(end, "G")) mult = 1ull << 30;
        else k.bad("a size (bytes, k, M, G)");
    } else if (*end) {
        k.bad("a whole number");
    }
    if (v > max / mult) k.bad("at most " + std::to_string(max));
    return v * mult;
}

void get_uint(const tw_host *host, const char *name, uint64_t *out, uint64_t max, bool sizes = false)
{
    Key k(host, name);
    if (k.value) *out = parse_uint(k, max, sizes);
}

void get_ms(const tw_host *host, const char *name, uint64_t *out_ns)
{
    Key k(host, name);
    if (k.value) *out_ns = parse_uint(k, 3600000, false) * 1000000ull;
}

void get_probability(const tw_host *host, const char *name, double *out)
{
    Key k(host, name);
    if (!k.value) return;
    char *end = nullptr;
    double v = strtod(k.value, &end);
    if (!*k.value || *end || !std::isfinite(v) || v < 0 || v > 1) k.bad("a probability from 0 to 1");
    *out = v;
}

void apply_profile(Settings &s, const Key &k)
{
    const std::string p = k.value;
    const bool chaos = p == "chaos";
    if (p == "none") return;
    if (p == "flaky" || chaos) {
        s.max_write = 1000;
        s.max_read = 700;
        s.eagain_probability = 0.05;
        s.eagain_ns = 2000000;
    }
    if (p == "slow" || chaos) {
        s.rx.latency_ns = s.tx.latency_ns = 1000000;
        s.rx.jitter_ns = s.tx.jitter_ns = 2000000;
        s.rx.bandwidth = s.tx.bandwidth = 8u << 20;
        s.stall_probability = 0.01;
        s.stall_ns = 50000000;
    }
    if (p == "lossy" || chaos) {
        s.connect_refuse_probability = 0.05;
        s.connect_timeout_probability = 0.02;
        s.connect_reset_probability = 0.05;
        s.reset_probability = 0.002;
    }
    if (p != "flaky" && p != "slow" && p != "lossy" && !chaos) k.bad(std::string("a profile: ") + profile_names());
}

void parse_target(Settings &s, const Key &k)
{
    std::string t = k.value;
    s.target_text = t;
    if (t == "all") {
        s.target = Settings::Target::All;
    } else if (t.rfind("one-in:", 0) == 0) {
        Key n = k;
        n.value = k.value + 7;
        s.one_in = parse_uint(n, 1000000000, false);
        if (s.one_in == 0) k.bad("all, one-in:N (N >= 1) or port:P");
        s.target = Settings::Target::OneIn;
    } else if (t.rfind("port:", 0) == 0) {
        Key n = k;
        n.value = k.value + 5;
        s.port = static_cast<uint32_t>(parse_uint(n, 65535, false));
        s.target = Settings::Target::Port;
    } else {
        k.bad("all, one-in:N or port:P");
    }
}

void load(const tw_host *host, Settings &s)
{
    Key inner(host, "fault.inner");
    if (inner.value) {
        if (!*inner.value) inner.bad("a transport name (tcp, rdma, pair, ...)");
        if (!strcmp(inner.value, "fault")) inner.bad("another transport: fault cannot wrap itself");
        s.inner = inner.value;
    }
    Key profile(host, "fault.profile");
    if (profile.value) {
        apply_profile(s, profile);
        s.profile = profile.value;
    }
    Key seed(host, "fault.seed");
    if (seed.value) {
        s.seed = parse_uint(seed, UINT64_MAX, false);
        s.seed_set = true;
    }
    Key target(host, "fault.target");
    if (target.value) parse_target(s, target);
    get_ms(host, "fault.rx_latency_ms", &s.rx.latency_ns);
    get_ms(host, "fault.rx_jitter_ms", &s.rx.jitter_ns);
    get_uint(host, "fault.rx_bandwidth", &s.rx.bandwidth, 1ull << 40, true);
    get_ms(host, "fault.tx_latency_ms", &s.tx.latency_ns);
    get_ms(host, "fault.tx_jitter_ms", &s.tx.jitter_ns);
    get_uint(host, "fault.tx_bandwidth", &s.tx.bandwidth, 1ull << 40, true);
    get_uint(host, "fault.max_write", &s.max_write, 1ull << 30, true);
    get_uint(host, "fault.max_read", &s.max_read, 1ull << 30, true);
    get_probability(host, "fault.eagain_probability", &s.eagain_probability);
    get_ms(host, "fault.eagain_ms", &s.eagain_ns);
    get_probability(host, "fault.connect_refuse_probability", &s.connect_refuse_probability);
    get_probability(host, "fault.connect_timeout_probability", &s.connect_timeout_probability);
    get_probability(host, "fault.connect_reset_probability", &s.connect_reset_probability);
    get_uint(host, "fault.reset_after_bytes", &s.reset_after_bytes, 1ull << 50, true);
    get_probability(host, "fault.reset_probability", &s.reset_probability);
    get_probability(host, "fault.stall_probability", &s.stall_probability);
    get_ms(host, "fault.stall_ms", &s.stall_ns);
    if (s.eagain_probability > 0 && s.eagain_ns == 0)
        throw Bad("fault.eagain_ms = 0 with fault.eagain_probability set: a burst needs a length (at least 1 ms)");
    if (s.connect_refuse_probability + s.connect_timeout_probability + s.connect_reset_probability > 1)
        throw Bad("fault.connect_refuse_probability + fault.connect_timeout_probability + "
                  "fault.connect_reset_probability add up to more than 1");
}

void add(std::string &out, const char *name, uint64_t v)
{
    if (v) out += (out.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(v);
}

void add_p(std::string &out, const char *name, double p)
{
    if (p <= 0) return;
    char buf[64];
    snprintf(buf, sizeof buf, "%s=%g", name, p);
    out += (out.empty() ? "" : " ") + std::string(buf);
}

} // namespace

const char *profile_names() { return "none, flaky, slow, lossy, chaos"; }

std::string Settings::summary() const
{
    std::string out;
    add(out, "rx_latency_ms", rx.latency_ns / 1000000);
    add(out, "rx_jitter_ms", rx.jitter_ns / 1000000);
    add(out, "rx_bandwidth", rx.bandwidth);
    add(out, "tx_latency_ms", tx.latency_ns / 1000000);
    add(out, "tx_jitter_ms", tx.jitter_ns / 1000000);
    add(out, "tx_bandwidth", tx.bandwidth);
    add(out, "max_write", max_write);
    add(out, "max_read", max_read);
    add_p(out, "eagain_probability", eagain_probability);
    if (eagain_probability > 0) add(out, "eagain_ms", eagain_ns / 1000000);
    add_p(out, "connect_refuse_probability", connect_refuse_probability);
    add_p(out, "connect_timeout_probability", connect_timeout_probability);
    add_p(out, "connect_reset_probability", connect_reset_probability);
    add(out, "reset_after_bytes", reset_after_bytes);
    add_p(out, "reset_probability", reset_probability);
    add_p(out, "stall_probability", stall_probability);
    if (stall_probability > 0) add(out, "stall_ms", stall_ns / 1000000);
    return out.empty() ? "none" : out;
}

int load_settings(const tw_host *host, Settings *out, char *why, size_t why_len)
{
    return twinwire::stacking::load_guarded<Bad>(
        "fault",
        [&] {
            Settings s;
            load(host, s);
            *out = s;
        },
        why, why_len);
}

} // namespace fault
