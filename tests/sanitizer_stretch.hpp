// SPDX-License-Identifier: MIT
// How much longer a sanitized build may take for what a test waits on:
// sanitized builds run 10-20 times slower, and on a busy host a thread can
// then sit still for half a second.
#pragma once

namespace twinwire::test {

constexpr long long sanitizer_stretch()
{
#if defined(__SANITIZE_THREAD__)
    return 4;
#elif defined(__SANITIZE_ADDRESS__)
    return 2;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    return 4;
#elif __has_feature(address_sanitizer)
    return 2;
#else
    return 1;
#endif
#else
    return 1;
#endif
}

} // namespace twinwire::test
