#!/bin/sh
# twinwire-info on this host must say which transport and why, and in rdma
# mode where RDMA cannot start, exit 1 saying so.  The plugin is forced to a
# path that does not exist, so the answer is known whatever the host has.
# Then it lists every plugin file of a search path it is given (a copy of
# the tcpcopy test plugin, one named rdma whose init refuses, one built for
# ABI 2 under a v1 file name), as text and as JSON.
# usage: check_info.sh TWINWIRE_INFO TCPCOPY_PLUGIN INIT_REFUSES_PLUGIN V2_PLUGIN
set -u
info=$1 tcpcopy=$2 refuses=$3 v2=$4
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
echo "$out" | grep -q -- '--bogus' || fail "the bad argument is not named"

out=$("$info" --help 2>&1); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q -- '--transport T' && echo "$out" | grep -q 'Exit status' || fail "--help"

# Given twice, the last --transport counts (tcp: plugins are not looked at).
out=$("$info" --transport rdma --transport tcp 2>&1); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q 'not looked at' || fail "the last --transport does not count"

out=$("$info" --version 2>&1); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q '^twinwire-info [0-9.]* (ABI 1\.[0-9]*)$' || fail "--version"

dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
cp "$tcpcopy" "$dir/twinwire-tcpcopy-abi1.so" && cp "$refuses" "$dir/twinwire-rdma-abi1.so" &&
    cp "$v2" "$dir/twinwire-old-abi1.so" && echo "not a plugin" >"$dir/README" || exit 1
out=$("$info" --plugin "$dir" --transport tcpcopy,tcp 2>&1); rc=$?
[ $rc -eq 0 ] || fail "a list whose first plugin loads exited $rc"
echo "$out" | grep -q "^  $dir (plugin_path, --plugin)\$" || fail "the search path is not listed"
echo "$out" | grep -q '^  tcpcopy: ABI 1\.[0-9]*, version renamed-test, caps [a-z,-]*ipv6[a-z,-]*: loads$' ||
    fail "the tcpcopy plugin is not listed with ABI, version and caps"
echo "$out" | grep -q '^  rdma: ABI 1\.[0-9]*, version test, caps none: loads$' || fail "the rdma plugin is not listed"
echo "$out" | grep -q '^  old: does not load: it exports twinwire_plugin_entry_v2: built for ABI 2' ||
    fail "the ABI 2 plugin is not listed with why it does not load"
echo "$out" | grep -q 'README' && fail "a file that is not named like a plugin is listed"
echo "$out" | grep -q '^transport: tcpcopy$' || fail "the list does not choose tcpcopy"
echo "$out" | grep -q '^in use, in order: tcpcopy, tcp$' || fail "the transports in use are not listed"

out=$("$info" --plugin "$dir" --transport tcpcopy,tcp --json 2>&1); rc=$?
[ $rc -eq 0 ] || fail "--json exited $rc"
echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
names = {p["name"]: p for p in d["plugins"]}
assert names["tcpcopy"]["loads"] and "ipv6" in names["tcpcopy"]["caps"], names
assert names["rdma"]["loads"] and names["rdma"]["version"] == "test", names
assert not names["old"]["loads"] and "ABI 2" in names["old"]["why_not"], names
assert d["transport"] == "tcpcopy" and d["in_use"] == ["tcpcopy", "tcp"] and d["can_start"], d
' || fail "the JSON document does not say the same"
echo "ok: twinwire-info explains the choice in auto, rdma, tcp and list modes and lists the plugins found, as text and JSON"
