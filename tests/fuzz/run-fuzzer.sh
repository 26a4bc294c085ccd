#!/usr/bin/env bash
# Runs one libFuzzer target the way CI does: every kept crash input once
# (regressions must stay fixed), then a bounded fuzzing run seeded from the
# corpus in the tree, printing executions and coverage.
#
#   run-fuzzer.sh TARGET CORPUS_DIR REGRESSIONS_DIR [libFuzzer args...]
#
# TW_FUZZ_SECONDS (default 20) bounds the fuzzing run; set it higher to fuzz
# longer on demand. New crash inputs are written to TW_FUZZ_ARTIFACTS (default:
# a temporary directory, printed): copy them into REGRESSIONS_DIR once fixed.
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: $0 TARGET CORPUS_DIR REGRESSIONS_DIR [args...]" >&2; exit 2; }
target=$1 corpus=$2 regressions=$3
shift 3
seconds=${TW_FUZZ_SECONDS:-20}
artifacts=${TW_FUZZ_ARTIFACTS:-$(mktemp -d /tmp/tw-fuzz-artifacts.XXXXXX)}
mkdir -p "$artifacts"

shopt -s nullglob
kept=("$regressions"/*)
if [ ${#kept[@]} -gt 0 ]; then
  echo "== ${#kept[@]} kept regression inputs from $regressions"
  # libFuzzer's own exit status for a crash is 77, which Meson reads as SKIP:
  # every failure here exits 1.
  if ! out=$("$target" "$@" "${kept[@]}" 2>&1); then
    printf '%s\n' "$out" | tail -n 40
    echo "a kept regression input fails again"
    exit 1
  fi
  echo "   all pass"
fi

# Fuzz into a scratch copy so the corpus in the tree only grows by hand.
work=$(mktemp -d /tmp/tw-fuzz-corpus.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
echo "== fuzzing $(basename "$target") for ${seconds}s (seed corpus: $corpus, crash inputs go to $artifacts)"
full_log=$artifacts/$(basename "$target").log
"$target" "$@" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" >"$full_log" 2>&1
rc=$?
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|stat::' "$full_log"
if [ "$rc" != 0 ]; then
  # What the target printed before it died, and the sanitizer's report.
  grep -vE '^#[0-9]+[[:space:]]' "$full_log" | tail -n 60
  echo "libFuzzer exited with $rc: see the crash input in $artifacts (full log: $full_log)"
  exit 1
fi
# Nothing to keep from a clean run in a directory of our own.
[ -n "${TW_FUZZ_ARTIFACTS:-}" ] || rm -rf "$artifacts"
