// SPDX-License-Identifier: MIT
// libFuzzer entry point: RESP requests through a session, whole and in
// pieces (built with -Dfuzzing=true; see tests/fuzz/kvd/meson.build).
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::string broken = kvd_test::check_input(data, size);
    if (!broken.empty()) {
        std::fprintf(stderr, "%s\n", broken.c_str());
        std::abort();
    }
    return 0;
}
