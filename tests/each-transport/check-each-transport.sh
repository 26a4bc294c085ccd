#!/usr/bin/env bash
# twinwire-each-transport judges runs by what happened (TAP, host only, a
# few seconds): a command that passes, one that fails, one that skips, a
# plugin that is not installed (skip, or failure when required), and a run
# whose program used another transport than the one asked for or never said
# which it used. Stand-in commands play the test; a fake plugin file plays an
# installed plugin (the helper only looks for the file; the strict selection
# in the real runtime is what refuses to fall back).
#   check-each-transport.sh path/to/twinwire-each-transport
set -u
helper=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/plugins"
: >"$tmp/plugins/twinwire-pair-abi1.so"
export TWINWIRE_PLUGIN_PATH=$tmp/plugins
# A stand-in test: logs the transport line a runtime would, as given.
cat >"$tmp/fake-test" <<'SH'
#!/bin/sh
# fake-test USED EXIT: log "using USED" (none: nothing) and exit with EXIT
[ "$1" = none ] || echo "2026-01-01T00:00:00.000Z twinwire[1] INFO [transport] using $1: stand-in" >>"$TWINWIRE_LOG_FILE"
echo "fake-test: asked for $TW_TEST_TRANSPORT"
[ "$2" = 77 ] && echo "SKIP: the stand-in cannot run here"
exit "$2"
SH
chmod +x "$tmp/fake-test"

n=0 failed=0
check() { # description, then a test command
  local what=$1
  shift
  n=$((n + 1))
  if "$@"; then echo "ok $n - $what"; else echo "not ok $n - $what"; failed=1; sed 's/^/# /' "$tmp/out"; fi
}
row() { grep -E "^$1 +$2 " "$tmp/out" >/dev/null; }
run() { "$helper" --logs "$tmp/logs" "$@" >"$tmp/out" 2>&1; echo $? >"$tmp/rc"; }
rc() { [ "$(cat "$tmp/rc")" = "$1" ]; }

echo "1..14"
run -t tcp -- "$tmp/fake-test" tcp 0
check "a run that exits 0 and used the transport asked for passes (exit 0)" eval 'row tcp PASS && rc 0'
check "its log is kept and holds the command's output and the twinwire log" \
  eval 'grep -q "fake-test: asked for tcp" "$tmp/logs/tcp.log" && grep -q "\[transport\] using tcp" "$tmp/logs/tcp.log"'
run -t tcp -- "$tmp/fake-test" tcp 3
check "a run that exits non-zero fails, with its exit status (exit 1)" eval 'row tcp FAIL && grep -q "tcp: exit status 3" "$tmp/out" && rc 1'
run -t pair -- "$tmp/fake-test" tcp 0
check "a run asked for pair whose runtime used tcp fails and says so" \
  eval 'row pair FAIL && grep -q "asked for pair, but a runtime used tcp" "$tmp/out" && rc 1'
run -t tcp -- "$tmp/fake-test" none 0
check "a run whose program never said which transport it used fails" \
  eval 'row tcp FAIL && grep -q "no twinwire runtime said which transport" "$tmp/out" && rc 1'
run -t tcp -- "$tmp/fake-test" tcp 77
check "a command that exits 77 is a skip with its reason (exit 0)" \
  eval 'row tcp SKIP && grep -q "the stand-in cannot run here" "$tmp/out" && rc 0'
run -t fault -- "$tmp/fake-test" fault 0
check "a transport whose plugin is not installed is a skip naming the file (exit 0)" \
  eval 'row "fault\(flaky, seed [0-9]+\)" SKIP && grep -q "not installed: no twinwire-fault-abi1.so in $tmp/plugins" "$tmp/out" && rc 0'
run -t fault --require fault -- "$tmp/fake-test" fault 0
check "the same transport, required, is a failure (exit 1)" eval 'grep -q "required, but not installed" "$tmp/out" && rc 1'
: >"$tmp/plugins/twinwire-fault-abi1.so"
run -t fault --fault-profile slow --seed 4242 -- sh -c 'env >"$0/env"; exit 1' "$tmp"
check "a fault run gets the named profile and the seed in the environment" \
  eval 'grep -qx TWINWIRE_FAULT_PROFILE=slow "$tmp/env" && grep -qx TWINWIRE_FAULT_SEED=4242 "$tmp/env" && grep -qx TWINWIRE_TRANSPORT=fault "$tmp/env"'
check "a failed fault run prints the command that reproduces it with its seed" \
  eval 'grep -q "reproduce with: .*--transports fault --fault-profile slow --seed 4242 -- sh" "$tmp/out"'
printf 'fault.max_write = 10  # at most 10 bytes a call\nprofile = none\n' >"$tmp/short.conf"
run -t fault --fault-profile "$tmp/short.conf" -- sh -c 'env >"$0/env"' "$tmp"
check "a profile file's keys arrive as TWINWIRE_FAULT_* variables" \
  eval 'grep -qx TWINWIRE_FAULT_MAX_WRITE=10 "$tmp/env" && grep -qx TWINWIRE_FAULT_PROFILE=none "$tmp/env"'
printf 'inner = rdma\n' >"$tmp/over-rdma.conf"
run -t fault --fault-profile "$tmp/over-rdma.conf" -- "$tmp/fake-test" fault 0
check "a fault profile around rdma needs the rdma plugin too (it runs in the guest)" \
  eval 'row "fault\(over-rdma, seed [0-9]+\)" SKIP && grep -q "not installed: no twinwire-rdma-abi1.so" "$tmp/out"'
run -t tcp,pair -- "$tmp/fake-test" pair 0
check "every transport gets its own run and row, in order (tcp fails, pair passes)" \
  eval 'row tcp FAIL && row pair PASS && [ "$(grep -cE "^(tcp|pair) " "$tmp/out")" = 2 ] && rc 1'
run -t tcp,bogus -- true
check "an unknown transport name is a usage error (exit 2)" eval 'grep -q "unknown transport .bogus." "$tmp/out" && rc 2'
exit $failed
