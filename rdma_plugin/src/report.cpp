// SPDX-License-Identifier: MIT
#include "report.hpp"

#include <arpa/inet.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace twrdma {

std::string format(const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return "";
    if (static_cast<size_t>(n) < sizeof small) return std::string(small, static_cast<size_t>(n));
    std::string out(static_cast<size_t>(n) + 1, '\0');
    va_start(ap, fmt);
    std::vsnprintf(&out[0], out.size(), fmt, ap);
    va_end(ap);
    out.resize(static_cast<size_t>(n));
    return out;
}

std::string human_bytes(unsigned long long bytes)
{
    if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return format("%llu GiB", bytes >> 30);
    if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return format("%llu MiB", bytes >> 20);
    if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) return format("%llu KiB", bytes >> 10);
    return format("%llu bytes", bytes);
}

std::string sockaddr_text(const sockaddr *sa)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (sa && sa->sa_family == AF_INET) {
        auto *in = reinterpret_cast<const sockaddr_in *>(sa);
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        return format("%s:%u", host, ntohs(in->sin_port));
    }
    if (sa && sa->sa_family == AF_INET6) {
        auto *in6 = reinterpret_cast<const sockaddr_in6 *>(sa);
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        return format("[%s]:%u", host, ntohs(in6->sin6_port));
    }
    return sa ? format("(family %d)", sa->sa_family) : "?";
}

static const char *errno_hint(int err)
{
    switch (err) {
    case ENOMEM:
        return "registered memory or queue resources ran out; check RLIMIT_MEMLOCK and rdma.pool_max";
    case ENODEV:
        return "no RDMA device serves this address; check `rdma link` and the address";
    case EADDRNOTAVAIL:
        return "the address is not configured on an RDMA-capable interface";
    case EADDRINUSE:
        return "another process listens on this port";
    case EACCES:
    case EPERM:
        return "permission denied by the RDMA device (used after fork? limits?)";
    case ETIMEDOUT:
        return "the peer did not answer in time";
    case ECONNREFUSED:
        return "nothing listens for RDMA on that port";
    case EINVAL:
        return "invalid argument (device limits, or a resource in the wrong state)";
    default:
        return nullptr;
    }
}

std::string call_failed(const char *call, int err, const char *hint)
{
    if (!hint && err) hint = errno_hint(err);
    std::string out = call;
    if (err) out += format(": %s (errno %d)", std::strerror(err), err);
    else out += ": failed";
    if (hint && *hint) {
        out += "; hint: ";
        out += hint;
    }
    return out;
}

const char *wc_hint(ibv_wc_status status)
{
    switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
        return "the peer stopped acknowledging (dead, unreachable or its QP is gone)";
    case IBV_WC_RNR_RETRY_EXC_ERR:
        return "the peer had no receive posted (credit accounting broken?)";
    case IBV_WC_REM_ACCESS_ERR:
        return "the peer refused the remote write (bad rkey or address)";
    case IBV_WC_WR_FLUSH_ERR:
        return "the queue pair was already in error state";
    case IBV_WC_LOC_LEN_ERR:
        return "a message did not fit the posted receive buffer";
    case IBV_WC_LOC_PROT_ERR:
        return "a local buffer is outside the registered memory";
    default:
        return "";
    }
}

std::string wc_failed(const ibv_wc &wc, const char *what)
{
    std::string out = format("work completion %s: %s (status %d, vendor 0x%x)", what, ibv_wc_status_str(wc.status),
                             static_cast<int>(wc.status), wc.vendor_err);
    const char *hint = wc_hint(wc.status);
    if (*hint) {
        out += "; hint: ";
        out += hint;
    }
    return out;
}

} // namespace twrdma
