// SPDX-License-Identifier: MIT
// Paths the test runner passes in the environment (meson.build sets them).
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

inline std::string env_path(const char *name)
{
    const char *v = std::getenv(name);
    if (!v) FAIL("the test runner must set " << name);
    return v;
}
