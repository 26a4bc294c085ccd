// SPDX-License-Identifier: MIT
#pragma once

#include "core.hpp"

namespace twrdma {

int transport_init(const tw_host *host, tw_transport **out, char *why, size_t why_len);
void transport_fini(tw_transport *t);
/// Validate the rdma.* keys as init does, touching no device or library.
int transport_check_config(const tw_host *host, char *why, size_t why_len);
int transport_probe(const tw_host *host, char *buf, size_t len);
int transport_describe(tw_transport *t, char *buf, size_t len);

} // namespace twrdma
