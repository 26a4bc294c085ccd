// SPDX-License-Identifier: MIT
// Catch2's implementation, compiled once for every test program.  Each
// CATCH_CONFIG_MAIN copy cost about 30 s at -O2 and 140 s under ASan+UBSan,
// and eight programs had one.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "run_session.hpp"

int twinwire::test::run_catch_session(int argc, const char *const *argv) { return Catch::Session().run(argc, argv); }
