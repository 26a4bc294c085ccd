// SPDX-License-Identifier: MIT
// rdma-core is opened at run time, not linked: the plugin loads on a host
// without libibverbs / librdmacm, and refuses only when it must use them.
#pragma once

#include <string>

namespace twrdma {

/// Open libibverbs.so.1 and librdmacm.so.1 (runtime sonames, RTLD_NOW) and
/// resolve every rdma-core function the plugin calls.  Once per process;
/// later calls return at once.  Returns 0, or -ELIBACC with *why naming the
/// library, the loader's error and the Debian package to install.  No
/// rdma-core function may be called before it returned 0.
int load_rdma_core(std::string *why);

} // namespace twrdma
