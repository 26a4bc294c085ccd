#!/bin/sh
# Dropping a result that must be kept does not compile with
# -Werror=unused-result: each statement below is compiled in its own
# translation unit and must fail with a nodiscard/unused-result diagnostic;
# the same statements with their results kept must compile (so a failure is
# the attribute's doing, not a typo here).
# usage: check_nodiscard.sh CXX SOURCE_ROOT
set -u
cxx=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prelude='#include <twinwire/runtime.hpp>
#include <twinwire/log.hpp>
using namespace twinwire;
void dropped(Runtime &runtime, const Config &config, const std::string &path)
{
    (void)config; (void)path;'
failures=0
n=0
check() { # KEPT-FORM DROPPED-FORM
    n=$((n + 1))
    printf '%s\n    %s;\n}\n' "$prelude" "$1" > "$work/kept$n.cpp"
    printf '%s\n    %s;\n}\n' "$prelude" "$2" > "$work/dropped$n.cpp"
    if ! $cxx -std=c++17 -Werror=unused-result -fsyntax-only -I"$src/framework/include" \
            -I"$src/plugin_api/include" "$work/kept$n.cpp" 2> "$work/kept$n.err"; then
        echo "FAIL: '$1' does not compile:"; cat "$work/kept$n.err"; failures=$((failures + 1)); return
    fi
    if $cxx -std=c++17 -Werror=unused-result -fsyntax-only -I"$src/framework/include" \
            -I"$src/plugin_api/include" "$work/dropped$n.cpp" 2> "$work/dropped$n.err"; then
        echo "FAIL: '$2' compiles: its result may be dropped silently"; failures=$((failures + 1)); return
    fi
    if ! grep -q 'nodiscard\|unused-result\|unused result' "$work/dropped$n.err"; then
        echo "FAIL: '$2' fails for another reason:"; cat "$work/dropped$n.err"; failures=$((failures + 1)); return
    fi
    echo "ok: dropping the result of '$2' does not compile"
}
check 'auto l = runtime.listen({}, [](const ConnectionPtr &) {})' 'runtime.listen({}, [](const ConnectionPtr &) {})'
check 'auto s = select_transports(config)' 'select_transports(config)'
check 'auto t = Transport::builtin_tcp(config)' 'Transport::builtin_tcp(config)'
check 'auto p = PluginLibrary::open("rdma", config, nullptr)' 'PluginLibrary::open("rdma", config, nullptr)'
check 'auto p = PluginLibrary::open_file(path, nullptr)' 'PluginLibrary::open_file(path, nullptr)'
check 'bool ok = log::reopen(); (void)ok' 'log::reopen()'
[ $failures -eq 0 ] || { echo "FAIL: $failures of $n"; exit 1; }
echo "ok: all $n results that must be kept are [[nodiscard]]"
