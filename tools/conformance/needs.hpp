// SPDX-License-Identifier: MIT
// What a case needs beyond the required operations: an optional operation,
// a capability, or something of the context (an IPv6 address, an address
// that never answers).  A case whose needs are not met is SKIPPED with the
// reason - counted as a skip by the table reporter, never as a pass.
#pragma once

#include <twinwire/transport.h>

#include <cstddef>
#include <initializer_list>
#include <string>

namespace twinwire::conformance {

struct Need {
    std::string what; ///< "operation shutdown", "capability TW_CAP_IPV6", ...
    bool met;
};

/// The plugin's own table sets `member` (the host's stubs do not count).
Need need_operation(const char *member, size_t offset);
/// The plugin claims `cap` in ops.caps.
Need need_capability(uint64_t cap, const char *cap_name);
/// The plugin does NOT claim `cap` (cases about refusing what is not claimed).
Need need_no_capability(uint64_t cap, const char *cap_name);
/// Something the context provides (or not, with why).
Need need_context(bool met, std::string what);

/// Returns true, and records the running case as skipped with the unmet
/// needs, when one is not met.  Use through CONFORMANCE_NEEDS.
bool skip_unless(std::initializer_list<Need> needs);
/// Why the case `name` was skipped, or nullptr when it was not.
const std::string *skip_reason(const std::string &name);

/// "conformance", the reporter of table_reporter.cpp.  Naming it through
/// this symbol links that file (and its registration) into every program
/// that runs the cases, also from the static library.
extern const char kTableReporter[];

} // namespace twinwire::conformance

#define TW_NEED_OP(member)  ::twinwire::conformance::need_operation(#member, offsetof(tw_transport_ops, member))
#define TW_NEED_CAP(cap)    ::twinwire::conformance::need_capability(cap, #cap)
#define TW_NEED_NO_CAP(cap) ::twinwire::conformance::need_no_capability(cap, #cap)

/// First statement of a TEST_CASE (outside any SECTION): return from the
/// case, skipped, unless every need is met.
#define CONFORMANCE_NEEDS(...)                                                                                         \
    do {                                                                                                               \
        if (::twinwire::conformance::skip_unless({__VA_ARGS__})) return;                                               \
    } while (0)
