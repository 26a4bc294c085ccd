#!/bin/bash
# Host-side test of softroce-run's exit statuses (TAP): bad usage, skips,
# timeouts and every way a guest can stop, played by fake-qemu against a fake
# cache, so that nothing boots and nothing is downloaded.
#   check-exit-codes.sh path/to/softroce-run
set -u
runner=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd -P)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run"
export TMPDIR=$tmp/run
export SOFTROCE_RUN_CACHE=$tmp/cache
export SOFTROCE_RUN_QEMU=$here/fake-qemu

# A cache that passes softroce-run's freshness check.
mkdir -p "$tmp/cache/fake"
: >"$tmp/cache/fake/vmlinuz"
: >"$tmp/cache/fake/initramfs.gz"
echo 0.0.0-fake >"$tmp/cache/fake/kver"
ln -s fake "$tmp/cache/current"
(
  SOFTROCE_DIR=$(dirname "$runner")
  . "$SOFTROCE_DIR/lib/common.sh"
  . "$SOFTROCE_DIR/lib/cache.sh"
  cache_stamp >"$tmp/cache/fake/stamp"
)

# Missing host packages (or no qemu): nothing can run.
if ! "$runner" --check >"$tmp/check.out" 2>&1; then
  echo "1..0 # SKIP softroce-run cannot run here: $(tail -n1 "$tmp/check.out")"
  exit 0
fi

n=0
failed=0
# An empty pattern wants an empty file: the runner's own messages never go
# to stdout, which belongs to the command.
matches() { if [ -z "$1" ]; then [ ! -s "$2" ]; else grep -Eq "$1" "$2"; fi; }
# expect DESCRIPTION STATUS STDOUT-REGEX STDERR-REGEX [VAR=VALUE...] -- RUNNER-ARGS...
expect() {
  local what=$1 want=$2 out_re=$3 err_re=$4 vars=() rc why=
  shift 4
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  env "${vars[@]}" "$runner" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  n=$((n + 1))
  [ "$rc" = "$want" ] || why="exit status $rc, expected $want"
  [ -z "$why" ] && ! matches "$out_re" "$tmp/out" && why="stdout does not match /$out_re/ (empty: must be empty)"
  [ -z "$why" ] && ! matches "$err_re" "$tmp/err" && why="stderr does not match /$err_re/"
  if [ -z "$why" ]; then
    echo "ok $n - $what"
  else
    failed=1
    echo "not ok $n - $what: $why"
    sed 's/^/# stdout: /' "$tmp/out"
    sed 's/^/# stderr: /' "$tmp/err"
  fi
}

echo "1..16"
expect "an unknown option is a usage error, not a skip" 125 '' 'unknown option' -- --frobnicate -- true
expect "a malformed timeout is a usage error" 125 '' 'whole seconds' -- --timeout soon -- true
expect "no command is a usage error" 125 '' 'no command' --
expect "a build configured with -Dsoftroce=disabled skips and says so" 77 '' 'SKIP: .*disabled' -- --disabled -- true
expect "a missing qemu skips and names it" 77 '' 'SKIP: .*no-such-qemu' \
  SOFTROCE_RUN_QEMU=/nonexistent/no-such-qemu -- -- true
expect "a missing qemu fails when a guest is required" 125 '' 'required.*no-such-qemu' \
  SOFTROCE_RUN_QEMU=/nonexistent/no-such-qemu -- --required -- true
expect "the command's exit status is the runner's" 5 '^fake guest stdout$' '^fake guest stderr$' \
  "FAKE_GUEST=booted started rc=5" -- -- true
expect "a command that succeeds exits 0, its stderr kept apart from stdout" 0 '^fake guest stdout$' '^fake guest stderr$' \
  "FAKE_GUEST=booted started rc=0" -- -- true
expect "qemu failing to start a guest skips" 77 '' 'SKIP: .*qemu could not start' \
  FAKE_GUEST=crash -- -- true
expect "qemu failing to start fails when a guest is required" 125 '' 'required.*qemu could not start' \
  FAKE_GUEST=crash -- --required -- true
expect "a failed guest setup skips with its log" 77 '' 'SKIP: .*guest setup failed: fake setup failure' \
  "FAKE_GUEST=booted setup-failed" -- -- true
expect "a guest stopping before the command skips" 77 '' 'SKIP: .*before the command started' \
  FAKE_GUEST=booted -- -- true
expect "a guest dying while the command runs is a failure" 125 '' 'stopped while the command ran' \
  "FAKE_GUEST=booted started" -- -- true
expect "SOFTROCE_RUN_APPEND reaches the guest kernel's command line" 0 'cmdline: console=ttyS0 .* idle=poll$' '^fake guest stderr$' \
  "FAKE_GUEST=booted started append rc=0" SOFTROCE_RUN_APPEND=idle=poll -- -- true
expect "a command that hangs times out with 124" 124 '' 'timed out after 1s; the command was still running' \
  "FAKE_GUEST=booted started hang" -- --timeout 1 -- true
expect "a guest that hangs while booting times out with 124, not a skip" 124 '' 'timed out after 1s before the command started' \
  FAKE_GUEST=hang -- --timeout 1 -- true

leftovers=$(ls -A "$tmp/run")
[ -z "$leftovers" ] || { echo "# per-run directories left behind: $leftovers"; failed=1; }
exit $failed
