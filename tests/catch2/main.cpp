// SPDX-License-Identifier: MIT
// main() for test programs that need nothing before Catch2's session runs.
#include "run_session.hpp"

int main(int argc, char **argv) { return twinwire::test::run_catch_session(argc, argv); }
