// SPDX-License-Identifier: MIT
// One way to describe every verbs / rdma_cm failure: the call, the errno text
// or work-completion status, and a hint for the operator.
#pragma once

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <string>

namespace twrdma {

/// "rdma_resolve_addr: No such device (errno 19); hint: ..." ; `err` is a
/// positive errno (0: none).
std::string call_failed(const char *call, int err, const char *hint = nullptr);
/// "work completion RDMA_WRITE: transport retry counter exceeded (status 12, vendor 0x0); hint: ..."
std::string wc_failed(const ibv_wc &wc, const char *what);
/// A hint for a work-completion status ("" when none).
const char *wc_hint(ibv_wc_status status);
/// printf into a std::string.
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/// "10.77.0.2:7379", "[fe80::1]:7379"
std::string sockaddr_text(const ::sockaddr *sa);
/// "128 KiB", "8 MiB"
std::string human_bytes(unsigned long long bytes);

} // namespace twrdma
