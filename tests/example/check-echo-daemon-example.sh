#!/bin/sh
# The worked example of docs/testing-your-daemon.md, as a stranger runs it:
# install twinwire into a temporary directory outside the tree (meson install
# --destdir), build framework/examples/echo-daemon with its own meson.build
# against that tree (pkg-config twinwire), and from a directory outside the
# tree run its test with the installed twinwire-each-transport over tcp,
# pair, fault and rdma (in the SoftRoCE guest, through the installed
# twinwire-softroce-run: one boot). tcp must pass, and so must each
# transport this build made a plugin for (REQUIRED); rdma may skip only when
# no guest is possible here.
# usage: check-echo-daemon-example.sh BUILD SOURCE PREFIX LIBDIR BINDIR REQUIRED [RUNNER-OPTION]
set -u
build=$1 src=$2 prefix=$3 libdir=$4 bindir=$5 required=$6 runner_opt=${7:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$src/tests/installed-tree.sh"

install_tree "$build" "$prefix" "$libdir" "$bindir"
use_installed_pkgconfig "$prefix"
meson setup "$work/echo" "$src/framework/examples/echo-daemon" -Dwerror=true >"$work/setup.log" 2>&1 ||
    { cat "$work/setup.log"; fail "meson setup of the example against the installed tree"; }
grep -q "twinwire found: YES" "$work/setup.log" || { cat "$work/setup.log"; fail "pkg-config did not find twinwire"; }
meson compile -C "$work/echo" >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; fail "the example does not build"; }
grep -q "$dest$prefix/include" "$work/echo/compile_commands.json" ||
    fail "the example was not compiled against the installed headers"
echo "ok: the example builds against the installed tree, warnings as errors"

mkdir "$work/outside"
cd "$work/outside" || exit 1
# A random seed for the fault run, printed in the table: a failure is
# repeated with --seed (docs/test-transports.md, "What the matrix found").
set -- "$bin/twinwire-each-transport" --logs "$work/logs" --require "$required"
[ -z "$runner_opt" ] || set -- "$@" --guest-opt "$runner_opt"
"$@" -- "$work/echo/echo-test" >"$work/table" 2>&1
rc=$?
cat "$work/table"
if [ $rc != 0 ]; then
    for log in "$work"/logs/*.log; do
        grep -Eq " FAIL .* $log\$" "$work/table" && { echo "--- $log"; cat "$log"; }
    done
    fail "twinwire-each-transport exited $rc"
fi
for t in tcp pair 'fault\(flaky, seed [0-9]+\)' rdma; do
    grep -Eq "^$t +(PASS|SKIP) " "$work/table" || fail "no PASS or SKIP row for $t"
done
grep -Eq "^tcp +PASS " "$work/table" || fail "tcp did not pass"
if grep -Eq "^rdma +SKIP " "$work/table"; then
    grep -Eq "rdma: .*(no SoftRoCE guest possible|disabled|not installed)" "$work/table" ||
        fail "rdma skipped for another reason than no guest or no plugin"
    echo "ok: rdma skipped: $(sed -n 's/^ *rdma: //p' "$work/table")"
else
    # The guest wrote this log into the shared log directory.
    grep -q "echo-test: 4 clients got back every byte they sent over rdma" "$work/logs/rdma.log" ||
        fail "the rdma run's output did not come back from the guest"
    grep -q "listening on 10.77.0.2:[0-9]* over rdma" "$work/logs/rdma.log" ||
        fail "the rdma run did not listen on the guest's RDMA address"
    echo "ok: the installed twinwire-softroce-run ran the test over rdma from $work/outside"
fi
echo "ok: the example's test over every transport: $(grep -cE ' PASS ' "$work/table") passed, $(grep -cE ' SKIP ' "$work/table") skipped"
