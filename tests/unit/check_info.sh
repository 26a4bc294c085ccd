#!/bin/sh
# twinwire-info on this host must say which transport and why, and in rdma
# mode where RDMA cannot start, exit 1 saying so.  The plugin is forced to a
# path that does not exist, so the answer is known whatever the host has.
# usage: check_info.sh TWINWIRE_INFO
set -u
info=$1
fail() { echo "FAIL: $*"; echo "--- output:"; echo "$out"; exit 1; }

out=$("$info" --plugin /nonexistent/twinwire-rdma-abi1.so 2>&1); rc=$?
[ $rc -eq 0 ] || fail "auto mode exited $rc"
echo "$out" | grep -q '^transport: tcp$' || fail "auto mode does not say transport: tcp"
echo "$out" | grep -q '^reason: RDMA plugin not loaded: twinwire-rdma-abi1.so not found' || fail "no reason given"
echo "$out" | grep -q '^RLIMIT_MEMLOCK: soft ' || fail "no RLIMIT_MEMLOCK line"
echo "$out" | grep -q '/nonexistent/twinwire-rdma-abi1.so: not found' || fail "the file tried is not listed"

out=$("$info" --transport rdma --plugin /nonexistent/twinwire-rdma-abi1.so 2>&1); rc=$?
[ $rc -eq 1 ] || fail "rdma mode without RDMA exited $rc, expected 1"
echo "$out" | grep -q 'would refuse to start' || fail "rdma mode does not say it would refuse"

out=$("$info" --transport tcp 2>&1); rc=$?
[ $rc -eq 0 ] || fail "tcp mode exited $rc"
echo "$out" | grep -q 'not looked at' || fail "tcp mode looked at the plugin"

out=$("$info" --bogus 2>&1); rc=$?
[ $rc -eq 2 ] || fail "a bad argument exited $rc, expected 2"
echo "ok: twinwire-info explains the choice in auto, rdma and tcp modes"
