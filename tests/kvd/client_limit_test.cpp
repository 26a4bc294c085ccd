// SPDX-License-Identifier: MIT
// kvd.maxclients against the open-file limit, in a child process (the
// limits it sets cannot be undone in the test process itself).
#include "client_limit.hpp"
#include "../child_output.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

struct Outcome {
    size_t maxclients = 0;
    rlim_t soft_after = 0;
    std::string notice;
};

/// In a child with RLIMIT_NOFILE = soft/hard: fit `wanted` beside `reserved`.
Outcome fit_in_child(rlim_t soft, rlim_t hard, size_t wanted, size_t reserved)
{
    std::string text = twtest::output_of_child([&] {
        struct rlimit lim {
            soft, hard
        };
        if (setrlimit(RLIMIT_NOFILE, &lim) != 0) _exit(2);
        kvd::ClientLimit fit = kvd::fit_clients_to_fd_limit(wanted, reserved);
        getrlimit(RLIMIT_NOFILE, &lim);
        return std::to_string(fit.maxclients) + " " + std::to_string(lim.rlim_cur) + " " + fit.notice;
    });
    Outcome out;
    size_t a = text.find(' '), b = text.find(' ', a + 1);
    out.maxclients = std::stoul(text.substr(0, a));
    out.soft_after = std::stoul(text.substr(a + 1, b - a - 1));
    out.notice = text.substr(b + 1);
    return out;
}

} // namespace

TEST_CASE("maxclients is lowered to what a low open-file limit leaves, saying why", "[kvd][limits]")
{
    Outcome o = fit_in_child(100, 100, 10000, 36);
    CHECK(o.maxclients == 64);
    CHECK(o.notice.find("kvd.maxclients lowered from 10000 to 64: the open file limit is 100 (hard limit 100)") == 0);
}

TEST_CASE("the soft open-file limit is raised towards maxclients when the hard limit allows", "[kvd][limits]")
{
    Outcome o = fit_in_child(50, 400, 100, 36);
    CHECK(o.maxclients == 100);
    CHECK(o.soft_after == 136);
    CHECK(o.notice.empty());
}

TEST_CASE("a limit that leaves no descriptor for a client fits none", "[kvd][limits]")
{
    Outcome o = fit_in_child(30, 30, 10, 36);
    CHECK(o.maxclients == 0);
    CHECK_FALSE(o.notice.empty());
}
