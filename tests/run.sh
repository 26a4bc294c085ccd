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
# (only what runs on the host). They compile in the background, at idle
# priority, while the main build's suites run (log: $BUILD_DIR/extra-builds.log),
# each only what its tests need; their tests run after the main suites.
#   asan  $BUILD_DIR-asan: clang, ASan+UBSan, -O0, no RDMA; suites unit,
#         conformance-tcp, conformance-pair, conformance-fault,
#         conformance-tls, kvd, bench
#   tsan  $BUILD_DIR-tsan: gcc, TSan, no RDMA; the same suites
#   fuzz  $BUILD_DIR-fuzz: clang, -Dfuzzing=true, ASan+UBSan; the fuzz
#         targets, each runs TW_FUZZ_SECONDS (default 20)
#   abi2  $BUILD_DIR-abi2: TW_ABI_MAJOR forced to 2, -O0, no RDMA; the unit
#         test's loader cases
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
host_suites=(unit conformance-tcp conformance-pair conformance-fault conformance-tls kvd bench)
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
  tools/softroce/softroce-run --setup || echo "no SoftRoCE guest here: the RDMA tests will skip or fail, saying why"
}

# Meson options for line tables only: flag is the compiler's (-g1, -gline-tables-only).
line_tables_only() { # flag
  echo "-Ddebug=false -Dc_args=$1 -Dcpp_args=$1"
}

# The Meson options of each extra build; none of them boots the guest.
# b_lundef=false (asan, fuzz): clang links its sanitizer run-time into
# executables only. The sanitizer builds keep line tables only (-g1,
# -gline-tables-only): their reports still name file and line, and full
# debug information cost a quarter to a third of their compile time.
extra_options() { # kind
  local clang_lines gcc_lines
  clang_lines=$(line_tables_only -gline-tables-only)
  gcc_lines=$(line_tables_only -g1)
  # abi2 is a unity build, as new directories are (tests/setup-lib.sh). The
  # others compile file by file, so CI still fails a source that compiles
  # only beside its unity neighbours' includes. And clang 14 writes a unity
  # build's source paths, which are absolute, into the type names UBSan
  # keeps ("lambda at /build/../src/x.cpp"): check_no_build_path.sh would
  # find the build tree's path in ASan's installed files.
  case $1 in
  # Unoptimised: UBSan's checks make -O2 compile 4-5 times slower (22 of the
  # run's 57 minutes went to this build), and -O0 removes none of their checks.
  asan) echo "-Db_sanitize=address,undefined -Doptimization=0 -Db_lundef=false $clang_lines -Drdma=disabled -Dsoftroce=disabled -Dunity=off" ;;
  tsan) echo "-Db_sanitize=thread $gcc_lines -Drdma=disabled -Dsoftroce=disabled -Dunity=off" ;;
  abi2) echo "-Dc_args=-DTW_ABI_MAJOR=2 -Dcpp_args=-DTW_ABI_MAJOR=2 -Doptimization=0 -Drdma=disabled -Dsoftroce=disabled ${unity_build[*]}" ;;
  # RDMA stays on: its fuzz targets need the plugin's sources (never a device).
  fuzz) echo "-Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false $clang_lines -Dsoftroce=disabled -Dunity=off" ;;
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

# The files some tests need built (their executables and depends), the tests
# picked by suite or by name: an extra build compiles nothing else.
needed_targets() { # dir --suite|--name NAME...
  meson introspect "$1" --tests --targets |
    python3 -c 'import json, os, sys
info = json.load(sys.stdin)
by_id = {t["id"]: t for t in info["targets"]}
by_suite, names = sys.argv[2] == "--suite", set(sys.argv[3:])
files = set()
for t in info["tests"]:
    if (names & {s.split(":")[-1] for s in t["suite"]}) if by_suite else t["name"] in names:
        for dep in t["depends"]:
            files.update(os.path.relpath(f, os.path.abspath(sys.argv[1])) for f in by_id[dep]["filename"])
print("\n".join(sorted(files)))' "$@"
}

# The compiler of an extra build. clang for ASan + UBSan (at -O0 it compiles
# this tree in about half of gcc's time) and for libFuzzer, which is clang's;
# TSan stays with gcc (clang's static TSan run-time defines operator new,
# which the unit test of allocation failure replaces).
extra_compiler() { # kind
  case $1 in asan | fuzz) echo clang ;; *) echo gcc ;; esac
}

# A build directory made by another compiler is made again (Meson keeps the
# compiler a directory was set up with; its log names it, "(gcc 12.2.0 ...").
drop_if_other_compiler() { # dir compiler
  local have
  [ -f "$1/meson-private/coredata.dat" ] || return 0
  have=$(sed -n 's/^C++ compiler for the host machine: [^(]*(\([a-z]*\) .*/\1/p' "$1/meson-logs/meson-log.txt" 2>/dev/null | head -1)
  [ -z "$have" ] || [ "$have" = "$2" ] && return 0
  echo "$1 was set up with $have, not $2: setting it up again"
  rm -rf "$1"
}

# Configures and compiles one extra build, only what its tests run. A failure
# is written to $build/extra-$kind.failed, which test_extra reports.
build_extra() { # kind
  local kind=$1 dir=$build-$1 failed=$build/extra-$1.failed compiler cxx targets
  compiler=$(extra_compiler "$kind")
  cxx=g++
  [ "$compiler" = clang ] && cxx=clang++
  drop_if_other_compiler "$dir" "$compiler"
  # shellcheck disable=SC2046 # option lists
  CC=$compiler CXX=$cxx configure "$dir" $(extra_options "$kind") ||
    { echo "$dir: meson configuration failed" >"$failed"; return; }
  # After `meson configure` the target list is stale until regenerated.
  ninja -C "$dir" build.ninja >/dev/null || { echo "$dir: meson regeneration failed" >"$failed"; return; }
  case $kind in
  fuzz) targets=$(fuzz_targets "$dir") ;;
  abi2) targets=$(needed_targets "$dir" --name unit) ;;
  *) targets=$(needed_targets "$dir" --suite "${host_suites[@]}") ;;
  esac
  if [ -z "$targets" ]; then
    if [ "$kind" = fuzz ]; then
      echo "$dir: no fuzz-* target configured (is clang's libFuzzer installed?)" >"$failed"
    else
      echo "$dir: no test to build" >"$failed"
    fi
    return
  fi
  # shellcheck disable=SC2086 # a list of paths
  ninja -C "$dir" $targets || echo "$dir: build failed" >"$failed"
}

# Runs one extra build's tests (after build_extra).
test_extra() { # kind
  local kind=$1 dir=$build-$1 failed=$build/extra-$1.failed rc
  if [ -f "$failed" ]; then
    broken+=("$(cat "$failed")")
    return
  fi
  case $kind in
  fuzz) meson test -C "$dir" --no-rebuild --print-errorlogs --suite fuzz ;;
  # The ABI major is written once, in abi.h: with it forced to 2 the
  # framework's loader tests must hold as they are (entry symbol, file
  # names and refusals all follow).
  abi2) meson test -C "$dir" --no-rebuild --print-errorlogs unit --test-args '[loader]' ;;
  # A race in a daemon the scripts start must end it (and fail the test),
  # not only print to a log nobody reads; Meson sets ASAN/UBSAN_OPTIONS so.
  # detect_deadlocks=0: TSan's lock-order detector keeps a fixed, small
  # table of the locks one thread holds and aborts (a CHECK in
  # DeadlockDetectorTLS::addLock) when twinwire-kvd's EXEC holds every
  # transaction lane plus the key stripes of a multi-key command; data
  # races are still detected and still end the process.
  *)
    # shellcheck disable=SC2046 # a list of arguments
    TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1 detect_deadlocks=0} \
      meson test -C "$dir" --no-rebuild --print-errorlogs $(suite_args "$dir" "${host_suites[@]}")
    ;;
  esac
  rc=$?
  if [ -f "$dir/meson-logs/testlog.json" ]; then
    extra_logs+=("$dir/meson-logs/testlog.json")
  else
    broken+=("$dir: meson test wrote no log (exit status $rc)")
  fi
}

# The extra builds compile while the main build's suites run: the guest's
# tests mostly wait on timers (its emulator used about 40 % of one core over
# the RDMA cases), so the host has a core and more to spare. At idle CPU and
# I/O priority, a compiler only takes time no test wants. Output goes to
# $build/extra-builds.log, shown once they are done.
start_extra_builds() {
  [ -n "$extra_builds" ] || return 0
  # Its own process group (job control on for this one job), so that
  # stop_extra_builds reaches every compiler.
  set -m
  (
    chrt --idle -p 0 $BASHPID >/dev/null 2>&1 || renice -n 19 -p $BASHPID >/dev/null
    ionice -c 3 -p $BASHPID 2>/dev/null
    t0=$(date +%s)
    for kind in $extra_builds; do
      printf '\n=== %s build (%s)\n' "$kind" "$build-$kind"
      t1=$(date +%s)
      build_extra "$kind"
      echo "$kind compiled in $(($(date +%s) - t1))s"
    done
    echo "extra builds compiled in $(($(date +%s) - t0))s, in the background"
  ) </dev/null >"$build/extra-builds.log" 2>&1 &
  extras_pid=$!
  set +m
}

finish_extra_builds() {
  [ -n "$extras_pid" ] || return 0
  wait "$extras_pid"
  extras_pid=
  cat "$build/extra-builds.log"
}

# An interrupted run leaves no compiler behind.
stop_extra_builds() {
  [ -n "$extras_pid" ] || return 0
  kill -TERM -- "-$extras_pid" 2>/dev/null
}

# A stale log from an earlier run must never be counted.
rm -f "$log"
for kind in $extra_builds; do rm -f "$build-$kind/meson-logs/testlog.json" "$build/extra-$kind.failed"; done

step "packages"
timed packages install_packages || { echo "package installation failed"; exit 1; }
step "configure $build"
timed configure configure "$build" "$@" || { echo "meson configuration failed"; exit 1; }
step "build"
timed build meson compile -C "$build" || { echo "build failed"; exit 1; }
extras_pid=
trap stop_extra_builds EXIT
start_extra_builds
step "SoftRoCE guest"
timed guest prepare_guest
step "tests"
timed tests meson test -C "$build" --print-errorlogs
test_rc=$?
step "extra builds: $extra_builds"
timed extras-wait finish_extra_builds
for kind in $extra_builds; do
  step "$kind tests ($build-$kind)"
  timed "$kind" test_extra "$kind"
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
