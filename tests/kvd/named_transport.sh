#!/usr/bin/env bash
# twinwire-kvd with a transport chosen by its own name: a plugin named
# tcpcopy (the TCP backend under another name) found on TWINWIRE_PLUGIN_PATH
# serves kvd-probe, and INFO counts the client under that name.
# usage: named_transport.sh KVD PROBE PLUGIN_DIR
set -u
KVD=$1 PROBE=$2
export TWINWIRE_PLUGIN_PATH=$3
. "$(dirname "$0")/tap.sh"
WORK=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

log=$WORK/kvd.log
"$KVD" --port 0 --transport tcpcopy --log-file "$log" 2>"$WORK/stderr" &
pid=$!
if until_true 60 grep -qs ' serving on ' "$log"; then
    port=$(serving_port "$log")
    has "transport = tcpcopy serves over tcpcopy alone" "$(cat "$log")" \
        "serving on 127.0.0.1:$port over tcpcopy \\(transport tcpcopy:"
    info=$("$PROBE" --port "$port" --transport tcpcopy --show-transport INFO transport 2>&1 | tr -d '\r')
    has "the client is counted under its transport's name" "$info" $'connected_clients_tcpcopy:1\n'
    has "tcp clients are counted apart" "$info" $'connected_clients_tcp:0\n'
    has "this connection reports its transport" "$info" $'client_transport:tcpcopy\n'
    kill -TERM "$pid"
    wait "$pid"
    same "kvd exits 0 on SIGTERM" "$?" 0
    pid=
else
    not_ok "transport = tcpcopy starts" "$(cat "$log" "$WORK/stderr" 2>/dev/null)"
fi
finish
