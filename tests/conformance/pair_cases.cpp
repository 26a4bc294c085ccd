// SPDX-License-Identifier: MIT
// Cases only pair has.  Linked into conformance-pair only.
#include "harness.hpp"

#include <catch2/catch.hpp>

using namespace twinwire::conformance;
