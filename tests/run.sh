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
# "N passed, N failed" counted from Meson's own test logs: those of the main
# build and of every extra build below, a build that could not be made or
# tested counting as one failure.
#
# Extra builds (TW_EXTRA_BUILDS, default "asan tsan fuzz abi2"; "" = main build
# only), each in its own directory beside the main one, without the guest
# (only what runs on the host):
#   asan  $BUILD_DIR-asan: gcc, ASan+UBSan, -O0, no RDMA; suites unit,
#         conformance-tcp, conformance-pair, conformance-fault, kvd, bench
#   tsan  $BUILD_DIR-tsan: gcc, TSan, no RDMA; the same suites
#   fuzz  $BUILD_DIR-fuzz: clang, -Dfuzzing=true, ASan+UBSan; only the fuzz
#         targets are built, each runs TW_FUZZ_SECONDS (default 20)
#   abi2  $BUILD_DIR-abi2: TW_ABI_MAJOR forced to 2, no RDMA; only the unit
#         test's targets are built, and its loader cases run
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$root" || exit 1
TW_ROOT=$root
# shellcheck source=tests/setup-lib.sh
. "$root/tests/setup-lib.sh"
build=${BUILD_DIR:-build}
log=$build/meson-logs/testlog.json
timings=()
extra_builds=${TW_EXTRA_BUILDS-asan tsan fuzz abi2}
host_suites=(unit conformance-tcp conformance-pair conformance-fault kvd bench)
extra_logs=()
broken=() # "build-dir: what failed", each one failure in the summary

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

# The sanitizer builds: host suites only, never the guest.
extra_options() { # kind
  case $1 in
  # Unoptimised: UBSan's checks make -O2 compile 4-5 times slower (22 of the
  # run's 57 minutes went to this build), and -O0 removes none of their checks.
  asan) echo "-Db_sanitize=address,undefined -Doptimization=0 -Drdma=disabled -Dsoftroce=disabled" ;;
  tsan) echo "-Db_sanitize=thread -Drdma=disabled -Dsoftroce=disabled" ;;
  # RDMA stays on: its fuzz targets need the plugin's sources (never a device).
  # b_lundef=false: clang links its sanitizer run-time into executables only.
  abi2) echo "-Dc_args=-DTW_ABI_MAJOR=2 -Dcpp_args=-DTW_ABI_MAJOR=2 -Drdma=disabled -Dsoftroce=disabled" ;;
  fuzz) echo "-Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false -Dsoftroce=disabled" ;;
  esac
}

# The suites of $1 that have tests (meson refuses an unknown suite name).
suite_args() { # dir suite...
  local dir=$1 s
  shift
  local have
  have=$(meson introspect "$dir" --tests 2>/dev/null | python3 -c 'import json, sys; print(" ".join(sorted({s.split(":")[-1] for t in json.load(sys.stdin) for s in t["suite"]})))')
  for s in "$@"; do
    [[ " $have " == *" $s "* ]] && printf -- '--suite %s ' "$s"
  done
}

# The fuzz build compiles only what the fuzz suite runs.
fuzz_targets() { # dir
  meson introspect "$1" --targets |
    python3 -c 'import json, os, sys
for t in json.load(sys.stdin):
    if t["name"].startswith("fuzz-") and t["type"] == "executable":
        print(os.path.relpath(t["filename"][0], sys.argv[1]))' "$1"
}

# The files a test needs built (its executable and its depends).
test_targets() { # dir test-name
  meson introspect "$1" --tests --targets |
    python3 -c 'import json, os, sys
info = json.load(sys.stdin)
by_id = {t["id"]: t for t in info["targets"]}
for t in info["tests"]:
    if t["name"] == sys.argv[2]:
        for dep in t["depends"]:
            for f in by_id[dep]["filename"]:
                print(os.path.relpath(f, os.path.abspath(sys.argv[1])))' "$1" "$2"
}

run_extra_build() { # kind
  local kind=$1 dir=$build-$1 rc
  # shellcheck disable=SC2046 # option lists
  if [ "$kind" = fuzz ]; then
    CC=clang CXX=clang++ configure "$dir" $(extra_options fuzz) || { broken+=("$dir: meson configuration failed"); return; }
    local targets
    # After `meson configure` the target list is stale until regenerated.
    ninja -C "$dir" build.ninja >/dev/null || { broken+=("$dir: meson regeneration failed"); return; }
    targets=$(fuzz_targets "$dir")
    if [ -z "$targets" ]; then
      broken+=("$dir: no fuzz-* target configured (is clang's libFuzzer installed?)")
      return
    fi
    # shellcheck disable=SC2086 # a list of paths
    ninja -C "$dir" $targets || { broken+=("$dir: build failed"); return; }
    meson test -C "$dir" --no-rebuild --print-errorlogs --suite fuzz
  elif [ "$kind" = abi2 ]; then
    # The ABI major is written once, in abi.h: with it forced to 2 the
    # framework's loader tests must hold as they are (entry symbol, file
    # names and refusals all follow). Only what the unit test needs is built.
    configure "$dir" $(extra_options abi2) || { broken+=("$dir: meson configuration failed"); return; }
    ninja -C "$dir" build.ninja >/dev/null || { broken+=("$dir: meson regeneration failed"); return; }
    # shellcheck disable=SC2046 # a list of paths
    ninja -C "$dir" $(test_targets "$dir" unit) || { broken+=("$dir: build failed"); return; }
    meson test -C "$dir" --no-rebuild --print-errorlogs unit --test-args '[loader]'
  else
    configure "$dir" $(extra_options "$kind") || { broken+=("$dir: meson configuration failed"); return; }
    meson compile -C "$dir" || { broken+=("$dir: build failed"); return; }
    # A race in a daemon the scripts start must end it (and fail the test),
    # not only print to a log nobody reads; Meson sets ASAN/UBSAN_OPTIONS so.
    # detect_deadlocks=0: TSan's lock-order detector keeps a fixed, small
    # table of the locks one thread holds and aborts (a CHECK in
    # DeadlockDetectorTLS::addLock) when twinwire-kvd's EXEC holds every
    # transaction lane plus the key stripes of a multi-key command; data
    # races are still detected and still end the process.
    # shellcheck disable=SC2046 # a list of arguments
    TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1 detect_deadlocks=0} \
      meson test -C "$dir" --no-rebuild --print-errorlogs $(suite_args "$dir" "${host_suites[@]}")
  fi
  rc=$?
  if [ -f "$dir/meson-logs/testlog.json" ]; then
    extra_logs+=("$dir/meson-logs/testlog.json")
  else
    broken+=("$dir: meson test wrote no log (exit status $rc)")
  fi
}

# A stale log from an earlier run must never be counted.
rm -f "$log"
for kind in $extra_builds; do rm -f "$build-$kind/meson-logs/testlog.json"; done

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
for kind in $extra_builds; do
  step "$kind build ($build-$kind)"
  timed "$kind" run_extra_build "$kind"
done

step "summary"
echo "timings: ${timings[*]}"
[ -f "$log" ] || { echo "meson test wrote no log ($log)"; exit 1; }
broken_args=()
for b in "${broken[@]}"; do broken_args+=(--broken "$b"); done
python3 tests/summarize-testlog.py "$log" "${extra_logs[@]}" "${broken_args[@]}"
summary_rc=$?
[ $test_rc = 0 ] && exit $summary_rc
exit $test_rc
