#!/usr/bin/env bash
# Builds twinwire and runs every test suite, RDMA ones in a SoftRoCE guest.
# On a fresh Debian 12 machine (as root, with the Debian archive reachable)
# it first installs what is missing from tests/debian-packages.txt.
#
#   tests/run.sh [MESON-OPTION...]     e.g. tests/run.sh -Dsoftroce=enabled
#
# The options go to `meson setup` for a new build directory and to `meson
# configure` for an existing one. BUILD_DIR (default: build) picks the
# directory. The summary at the end lists the RDMA tests that ran in the
# guest and those that skipped, and ends with "N skipped" and
# "N passed, N failed" counted from Meson's own test log.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$root" || exit 1
TW_ROOT=$root
# shellcheck source=tests/setup-lib.sh
. "$root/tests/setup-lib.sh"
build=${BUILD_DIR:-build}
log=$build/meson-logs/testlog.json
timings=()

step() { printf '\n=== %s\n' "$*"; }
# Runs a step and records its wall time for the summary.
timed() { # label command...
  local label=$1 t0 rc
  shift
  t0=$(date +%s)
  "$@"
  rc=$?
  timings+=("$label $(($(date +%s) - t0))s")
  return $rc
}

softroce_option() {
  meson introspect "$build" --buildoptions 2>/dev/null |
    python3 -c 'import json, sys; print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "softroce"), "auto"))'
}

# The guest's kernel cache is built before the tests, not inside the first
# RDMA test's time budget. Failing here is not fatal: the RDMA tests then
# skip (or fail with -Dsoftroce=enabled) and say why.
prepare_guest() {
  if [ "$(softroce_option)" = disabled ]; then
    echo "-Dsoftroce=disabled: the RDMA tests will skip"
    return 0
  fi
  tests/softroce/softroce-run --setup || echo "no SoftRoCE guest here: the RDMA tests will skip or fail, saying why"
}

# A stale log from an earlier run must never be counted.
rm -f "$log"

step "packages"
timed packages install_packages || { echo "package installation failed"; exit 1; }
step "configure $build"
timed configure configure "$build" "$@" || { echo "meson configuration failed"; exit 1; }
step "build"
timed build meson compile -C "$build" || { echo "build failed"; exit 1; }
step "SoftRoCE guest"
timed guest prepare_guest
step "tests"
timed tests meson test -C "$build" --print-errorlogs
test_rc=$?

step "summary"
echo "timings: ${timings[*]}"
[ -f "$log" ] || { echo "meson test wrote no log ($log)"; exit 1; }
python3 tests/summarize-testlog.py "$log"
summary_rc=$?
[ $test_rc = 0 ] && exit $summary_rc
exit $test_rc
