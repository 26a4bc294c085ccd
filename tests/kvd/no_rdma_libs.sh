#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Deploying twinwire-kvd where libibverbs / librdmacm cannot be loaded: in a
# private mount namespace an empty file is bind-mounted over the library
# (tests/hide-library.sh).  The RDMA plugin itself still loads (it opens
# rdma-core only at init) and refuses at init naming the library and the
# package.  transport = auto must serve over TCP and log why; transport =
# rdma must refuse to start with that reason; a bad rdma.* value must stop
# start-up in auto mode there too.  TAP.
#
#   no_rdma_libs.sh KVD PROBE PLUGIN
#
# Skips (TAP "1..0 # SKIP why", exit 0: Meson reads a TAP test's exit 77 as
# an error) when the plugin was not built or no mount namespace can be made.
set -u
KVD=$1 PROBE=$2 PLUGIN=${3:-}

. "$(dirname "$0")/../hide-library.sh"
if [ -z "$PLUGIN" ] || [ ! -f "$PLUGIN" ]; then
    echo "1..0 # SKIP the RDMA plugin is not built here (meson -Drdma, libibverbs-dev, librdmacm-dev)"
    exit 0
fi
if ! in_private_mount_namespace "$0" "$@"; then
    echo "1..0 # SKIP cannot make a private mount namespace here (unshare -m and unshare -r -m both failed)"
    exit 0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kvd-no-rdma.XXXXXX")
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
: >"$WORK/empty"

. "$(dirname "$0")/tap.sh"

# with_broken SONAME: hide that library, run the cases, restore it.
with_broken() {
    local soname=$1 hidden
    local package=${soname%.so.1}1 # the Debian package the refusal must name
    local nl=$'\n'                   # [^$nl]*: within one log line
    if ! hidden=$(hide_library "$soname" "$WORK/empty" 2>&1); then
        not_ok "$soname can be hidden from the loader" "$hidden"
        return
    fi
    echo "# $soname ($hidden) is now an empty file in this mount namespace"

    local log=$WORK/auto-$soname.log
    "$KVD" --port 0 --transport auto --set "plugin_path=$PLUGIN" --log-file "$log" 2>"$WORK/auto.stderr" &
    local pid=$!
    PIDS+=("$pid")
    if until_true 60 grep -qs ' serving on ' "$log"; then
        local port
        port=$(serving_port "$log")
        ok "transport = auto without a loadable $soname starts"
        has "auto serves over TCP only" "$(cat "$log")" "serving on 127.0.0.1:$port over tcp \\(transport tcp:"
        # WARN where the kernel lists an RDMA device, INFO on a host without (README, "How the transport is chosen").
        has "auto logs why: the plugin loaded and refused at init, naming $soname and $package" "$(cat "$log")" \
            "(INFO|WARN) \\[transport\\] using tcp: RDMA plugin refused: [^$nl]*${soname//./\\.}[^$nl]*cannot be loaded[^$nl]*install $package[^$nl]*falling back to TCP"
        local pong
        pong=$("$PROBE" --port "$port" --transport tcp PING 2>&1)
        has "auto answers over TCP" "$pong" '^PONG$'
        kill -TERM "$pid"
        wait "$pid"
        has "auto exits 0 on SIGTERM" "$?" '^0$'
    else
        not_ok "transport = auto without a loadable $soname starts" "$(cat "$log" "$WORK/auto.stderr" 2>/dev/null)"
    fi

    local out st
    out=$("$KVD" --port 0 --transport rdma --set "plugin_path=$PLUGIN" 2>&1)
    st=$?
    has "transport = rdma refuses to start (exit 1) naming $soname and $package" "$st: $out" \
        "^1: .*ERROR \\[kvd\\] cannot serve: transport = rdma .* but RDMA plugin refused: [^$nl]*${soname//./\\.}[^$nl]*cannot be loaded[^$nl]*install $package"

    # timeout: a daemon that wrongly starts must not hang the test.
    out=$(timeout 30 "$KVD" --port 0 --transport auto --set "plugin_path=$PLUGIN" --set rdma.ring_size=100k 2>&1)
    st=$?
    has "without $soname, a bad rdma.* value still stops start-up in auto mode (exit 1) naming the key" "$st: $out" \
        "^1: .*rdma\\.ring_size = 100k .*power of two"
    unhide_library "$soname"
}

with_broken libibverbs.so.1
with_broken librdmacm.so.1

finish
