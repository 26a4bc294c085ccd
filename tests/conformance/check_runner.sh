#!/bin/sh
# Runs twinwire-conformance on a plugin file and checks the verdict.
#   check_runner.sh passes RUNNER PLUGIN   exit 0, no FAIL line, the totals line
#   check_runner.sh fails RUNNER PLUGIN CASE
#                                           exit 1 and "FAIL  CASE" (only CASE is run)
set -u
mode=$1 runner=$2 plugin=$3
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
if [ "$mode" = passes ]; then
    "$runner" --set "unixsock.dir=$dir" "$plugin" >"$dir/out" 2>&1
    rc=$?
    cat "$dir/out"
    [ $rc -eq 0 ] || { echo "check_runner: expected exit 0, got $rc"; exit 1; }
    grep -q '^FAIL' "$dir/out" && { echo "check_runner: a case failed"; exit 1; }
    grep -Eq '^[0-9]+ passed, 0 failed, [0-9]+ skipped' "$dir/out" || { echo "check_runner: no totals line"; exit 1; }
    exit 0
fi
case_name=$4
# The dropped event never comes: a short wait is enough to see that.
"$runner" --wait-ms 3000 --set "unixsock.dir=$dir" "$plugin" "$case_name" >"$dir/out" 2>&1
rc=$?
cat "$dir/out"
[ $rc -eq 1 ] || { echo "check_runner: expected exit 1 (a case failed), got $rc"; exit 1; }
grep -Fxq "FAIL  $case_name" "$dir/out" || { echo "check_runner: no 'FAIL  $case_name' line"; exit 1; }
