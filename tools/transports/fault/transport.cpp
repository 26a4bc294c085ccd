// SPDX-License-Identifier: MIT
// The fault transport as a whole: the inner transport it wraps (from the
// host's transport_ops service), its loops, totals and private ctrl ops.
#include "fault.hpp"

#include <inner_describe.hpp>
#include <stacked_loop.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

namespace {

void set_why(char *why, size_t len, const std::string &text)
{
    if (why && len) snprintf(why, len, "%s", text.c_str());
}

uint64_t default_seed(const tw_host *host) { return host->now_ns(host) ^ 0x5eedull; }

void fill_counts(const uint64_t *values, tw_fault_counts *out)
{
    tw_fault_counts full{};
    full.size = sizeof full;
    full.version = 1;
    std::memcpy(&full.connections, values, sizeof(uint64_t) * fault::kCountN);
    uint32_t n = std::min<uint32_t>(out->size, sizeof full);
    full.size = out->size;
    std::memcpy(out, &full, n);
}

} // namespace

extern "C" int fault_check_config(const tw_host *host, char *why, size_t why_len)
{
    fault::Settings s;
    return fault::load_settings(host, &s, why, why_len);
}

extern "C" int fault_init(const tw_host *host, tw_transport **out, char *why, size_t why_len)
{
    if (!host || host->size < TW_HOST_SIZE_V1) {
        set_why(why, why_len, "host services table too small for ABI 1.0");
        return -TW_EABI;
    }
    if (!TW_HAS_MEMBER(host, struct tw_host, transport_ops) || !host->transport_ops) {
        set_why(why, why_len,
                "this host (ABI 1." + std::to_string(host->version) +
                    ") cannot hand a plugin another transport: fault needs the transport_ops service "
                    "of ABI 1.2");
        return -TW_EABI;
    }
    fault::Settings s;
    int rc = fault::load_settings(host, &s, why, why_len);
    if (rc < 0) return rc;
    const tw_transport_ops *inner = nullptr;
    char reason[400] = "";
    rc = host->transport_ops(host, s.inner.c_str(), &inner, reason, sizeof reason);
    if (rc < 0 || !inner) {
        set_why(why, why_len, "fault.inner = " + s.inner + ": " + reason);
        return rc < 0 ? rc : -ENOENT;
    }
    tw_transport *t = new (std::nothrow) tw_transport{};
    if (!t) return -ENOMEM;
    t->host = host;
    t->inner = inner;
    if (!s.seed_set) s.seed = default_seed(host);
    t->settings = s;
    rc = inner->init(host, &t->inner_t, why, why_len);
    if (rc < 0 || !t->inner_t) {
        std::string inner_why = why ? why : "";
        set_why(why, why_len,
                "fault.inner = " + s.inner + " refused: " + (inner_why.empty() ? "init failed" : inner_why));
        delete t;
        return rc < 0 ? rc : -EINVAL;
    }
    // The seed goes to the log whether or not it was set: a failure found
    // with a random seed is repeated with fault.seed = that number.
    host->log(host, TW_LOG_INFO, "fault over %s: seed %llu (fault.seed), target %s, profile %s, faults: %s",
              s.inner.c_str(), static_cast<unsigned long long>(s.seed), s.target_text.c_str(), s.profile.c_str(),
              s.summary().c_str());
    *out = t;
    return 0;
}

extern "C" void fault_fini(tw_transport *t)
{
    if (!t) return;
    if (t->inner_t) t->inner->fini(t->inner_t);
    delete t;
}

extern "C" int fault_describe(tw_transport *t, char *buf, size_t len)
{
    const fault::Settings &s = t->settings;
    std::string text = "inner: " + s.inner + "\nseed: " + std::to_string(s.seed) + "\ntarget: " + s.target_text +
                       "\nprofile: " + s.profile + "\nfaults: " + s.summary() + "\ninjected:";
    static const char *names[] = {"connections",      "targeted",           "short_writes",   "short_reads",
                                  "eagain_bursts",    "eagain_returns",     "delayed_chunks", "stalls",
                                  "connects_refused", "connects_timed_out", "connects_reset", "resets"};
    for (int i = 0; i < fault::kCountN; ++i)
        text += std::string(" ") + names[i] + "=" + std::to_string(t->totals[i].load());
    text += "\n";
    text += twinwire::stacking::inner_description(t->inner, t->inner_t);
    return snprintf(buf, len, "%s", text.c_str());
}

extern "C" int fault_loop_attach(tw_transport *t, tw_loop *loop, tw_transport_loop **out)
{
    return twinwire::stacking::attach_loop(t, loop, out);
}

extern "C" void fault_loop_detach(tw_transport_loop *fl) { twinwire::stacking::detach_loop(fl, fault::free_conn); }

extern "C" int fault_has_pending(tw_transport_loop *fl)
{
    if (fl->t->inner->has_pending_data(fl->inner) > 0) return 1;
    uint64_t now = fl->t->host->now_ns(fl->t->host);
    for (tw_conn *c : fl->active)
        if (fault::own_events(c, now)) return 1;
    return 0;
}

extern "C" int fault_process_pending(tw_transport_loop *fl)
{
    int n = 0;
    if (fl->t->inner->has_pending_data(fl->inner) > 0) {
        int rc = fl->t->inner->process_pending_data(fl->inner);
        if (rc > 0) n += rc;
    }
    uint64_t now = fl->t->host->now_ns(fl->t->host);
    // A callback may close connections (and so change the list): copy it.
    std::vector<tw_conn *> ready;
    for (tw_conn *c : fl->active)
        if (fault::own_events(c, now)) ready.push_back(c);
    for (size_t i = 0; i < ready.size(); ++i) {
        tw_conn *c = ready[i];
        if (std::find(fl->active.begin(), fl->active.end(), c) == fl->active.end()) continue; // closed meanwhile
        fault::deliver(c);
        n++;
    }
    return n;
}

extern "C" const char *fault_strerror(int) { return nullptr; }

extern "C" int fault_ctrl(tw_transport *t, tw_conn *c, const char *ns, uint32_t op, void *data, size_t len)
{
    if (ns && !strcmp(ns, "fault")) {
        switch (op) {
        case TW_FAULT_CTRL_COUNTS: {
            auto *out = static_cast<tw_fault_counts *>(data);
            if (!out || len < 8 || out->size < 8 || out->size > len) return -EINVAL;
            uint64_t values[fault::kCountN];
            for (int i = 0; i < fault::kCountN; ++i) values[i] = c ? c->counts[i] : t->totals[i].load();
            fill_counts(values, out);
            return 0;
        }
        case TW_FAULT_CTRL_LOG:
            if (!c || !data) return -EINVAL;
            return snprintf(static_cast<char *>(data), len, "%s", c->log.c_str());
        case TW_FAULT_CTRL_ORDINAL:
            if (!c || !data || len < sizeof(uint64_t)) return -EINVAL;
            *static_cast<uint64_t *>(data) = c->ordinal;
            return 0;
        default:
            return -EOPNOTSUPP;
        }
    }
    // Everything else is the inner transport's (shared ops, its own namespace).
    if (c && !c->inner) return -ENOTCONN;
    return t->inner->ctrl(t->inner_t, c ? c->inner : nullptr, ns, op, data, len);
}
