#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A host without OpenSSL: in a private mount namespace an empty file is
# bind-mounted over libssl.so.3 (tests/hide-library.sh).  twinwire-info
# names why the tls plugin cannot load; twinwire-kvd still serves TCP with
# the tls plugin on its plugin path, and transport = tls refuses to start,
# naming the library.  TAP.
#
#   without_libssl.sh INFO KVD PLUGIN_DIR
set -u
INFO=$1 KVD=$2 PLUGIN_DIR=$3

. "$(dirname "$0")/../hide-library.sh"
if ! in_private_mount_namespace "$0" "$@"; then
    echo "1..0 # SKIP cannot make a private mount namespace here (unshare -m and unshare -r -m both failed)"
    exit 0
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tls-no-libssl.XXXXXX")
pid=
cleanup() {
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
: >"$WORK/empty"
. "$(dirname "$0")/../kvd/tap.sh"

if ! hidden=$(hide_library libssl.so.3 "$WORK/empty" 2>&1); then
    echo "1..0 # SKIP libssl.so.3 cannot be hidden here: $hidden"
    exit 0
fi
echo "# libssl.so.3 ($hidden) is now an empty file in this mount namespace"
nl=$'\n'

out=$(TWINWIRE_PLUGIN_PATH=$PLUGIN_DIR "$INFO" 2>&1)
has "twinwire-info names the tls plugin and why it does not load: libssl.so.3" "$out" \
    "tls[^$nl]*$nl?[^$nl]*libssl\\.so\\.3"

"$KVD" --port 0 --transport tcp --set "plugin_path=$PLUGIN_DIR" --log-file "$WORK/tcp.log" 2>"$WORK/tcp.stderr" &
pid=$!
if until_true 60 grep -qs ' serving on ' "$WORK/tcp.log"; then
    ok "twinwire-kvd serves TCP with the tls plugin on its path and no libssl"
    kill -TERM "$pid"
    wait "$pid"
    pid=
else
    not_ok "twinwire-kvd serves TCP with the tls plugin on its path and no libssl" "$(cat "$WORK/tcp.log" "$WORK/tcp.stderr")"
fi

out=$(timeout 30 "$KVD" --port 0 --transport tls --set "plugin_path=$PLUGIN_DIR" 2>&1)
st=$?
has "transport = tls refuses to start (exit 1), naming libssl.so.3" "$st: $out" \
    "^1: .*cannot serve: [^$nl]*libssl\\.so\\.3"
unhide_library libssl.so.3
finish
