#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Deploying twinwire-kvd where libibverbs / librdmacm cannot be loaded: in a
# private mount namespace an empty file is bind-mounted over the library, so
# the RDMA plugin's dlopen fails.  transport = auto must serve over TCP and
# log why; transport = rdma must refuse to start with that reason.  TAP.
#
#   no_rdma_libs.sh KVD PROBE PLUGIN
#
# Exit 77 when the plugin was not built or no mount namespace can be made.
set -u
KVD=$1 PROBE=$2 PLUGIN=${3:-}

if [ -z "${KVD_NO_RDMA_NS:-}" ]; then
    if [ -z "$PLUGIN" ] || [ ! -f "$PLUGIN" ]; then
        echo "1..0 # SKIP the RDMA plugin is not built here (meson -Drdma, libibverbs-dev, librdmacm-dev)"
        exit 77
    fi
    for how in "-m" "-r -m"; do
        # shellcheck disable=SC2086
        if unshare $how --propagation private true 2>/dev/null; then
            KVD_NO_RDMA_NS=1 exec unshare $how --propagation private "$0" "$@"
        fi
    done
    echo "1..0 # SKIP cannot make a private mount namespace here (unshare -m and unshare -r -m both failed)"
    exit 77
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

# Where the dynamic loader finds a soname the plugin needs.
library_path() { ldd "$PLUGIN" | sed -n "s|^[[:space:]]*$1 => \([^ ]*\) .*|\1|p" | head -1; }

# with_broken SONAME: hide that library, run the cases, restore it.
with_broken() {
    local soname=$1 path
    path=$(library_path "$soname")
    if [ -z "$path" ]; then
        not_ok "the plugin needs $soname (ldd finds it)" "$(ldd "$PLUGIN")"
        return
    fi
    path=$(readlink -f "$path")
    if ! mount --bind "$WORK/empty" "$path"; then
        not_ok "an empty file can be bind-mounted over $path"
        return
    fi
    echo "# $soname ($path) is now an empty file in this mount namespace"

    local log=$WORK/auto-$soname.log
    "$KVD" --port 0 --transport auto --set "plugin_path=$PLUGIN" --log-file "$log" 2>"$WORK/auto.stderr" &
    local pid=$!
    PIDS+=("$pid")
    if until_true 60 grep -qs ' serving on ' "$log"; then
        local port
        port=$(serving_port "$log")
        ok "transport = auto without a loadable $soname starts"
        has "auto serves over TCP only" "$(cat "$log")" "serving on 127.0.0.1:$port over tcp \\(transport tcp:"
        has "auto logs why: the plugin's dlopen failed naming $soname" "$(cat "$log")" \
            "INFO \\[transport\\] using tcp: RDMA plugin not loaded: .*dlopen.*${soname//./\\.}.*falling back to TCP"
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
    has "transport = rdma refuses to start (exit 1) naming $soname" "$st: $out" \
        "^1: .*ERROR \\[kvd\\] cannot serve: transport = rdma .* but RDMA plugin not loaded: .*${soname//./\\.}"
    umount "$path"
}

with_broken libibverbs.so.1
with_broken librdmacm.so.1

finish
