// SPDX-License-Identifier: MIT
// Catch2 declares Catch::Session only where its implementation is compiled
// (tests/catch2/impl.cpp, once for every test program): a main() of its own
// runs the session through this.
#pragma once

namespace twinwire::test {

int run_catch_session(int argc, const char *const *argv);

} // namespace twinwire::test
