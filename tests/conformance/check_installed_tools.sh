#!/bin/sh
# The installed tools load a stranger's plugin by its own name: with
# transport = unixsock, twinwire-info lists the example, twinwire-bench runs
# client and server over it and twinwire-kvd answers RESP requests over it.
# usage: check_installed_tools.sh BUILD_ROOT SOURCE_ROOT PREFIX LIBDIR BINDIR CC...
set -u
. "$(dirname "$0")/installed_kit_setup.sh"
server= kvd=
trap 'for p in $server $kvd; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
mkdir -p "$work/sockets"
# The installed tools load it by its own name (transport = unixsock).
conf=$work/unixsock.conf
cat >"$conf" <<CONF
transport = unixsock
plugin_path = $work/example
listen_address = 127.0.0.1
[unixsock]
dir = $work/sockets
CONF
"$bin/twinwire-info" --config "$conf" >"$work/info.log" 2>&1
rc=$?
# The list of plugin files is what this check reads: without it, it fails.
grep -q '^plugins found:' "$work/info.log" ||
    { cat "$work/info.log"; fail "twinwire-info lists no plugin files ('plugins found:') with transport = unixsock"; }
[ $rc -eq 0 ] || { cat "$work/info.log"; fail "twinwire-info exited $rc with transport = unixsock"; }
grep -q "twinwire-unixsock-abi$abi.so" "$work/info.log" || { cat "$work/info.log"; fail "twinwire-info does not list the example"; }
echo "ok: twinwire-info lists the example"

"$bin/twinwire-bench" server --config "$conf" --port 0 >"$work/server.log" 2>&1 &
server=$!
i=0
until port=$(sed -n 's/.*listening on [0-9.]*:\([0-9][0-9]*\).*/\1/p' "$work/server.log") && [ -n "$port" ]; do
    i=$((i + 1))
    [ $i -lt 300 ] || { cat "$work/server.log"; fail "twinwire-bench server over unixsock did not listen"; }
    sleep 0.1
done
"$bin/twinwire-bench" client --config "$conf" --host 127.0.0.1 --port "$port" --iterations 200 --sizes 64,64k \
    >"$work/client.log" 2>&1
rc=$?
kill "$server"; wait "$server"; server=
[ $rc -eq 0 ] || { cat "$work/client.log" "$work/server.log"; fail "twinwire-bench client over unixsock exited $rc"; }
echo "ok: twinwire-bench client and server over unixsock"

"$bin/twinwire-kvd" --config "$conf" --port 7379 >"$work/kvd.log" 2>&1 &
kvd=$!
i=0
until grep -q 'listening' "$work/kvd.log"; do
    i=$((i + 1))
    [ $i -lt 300 ] || { cat "$work/kvd.log"; fail "twinwire-kvd over unixsock did not listen"; }
    sleep 0.1
done
"$bin/twinwire-bench" resp --config "$conf" --host 127.0.0.1 --port 7379 --clients 2 --requests 2000 \
    >"$work/resp.log" 2>&1
rc=$?
kill "$kvd"; wait "$kvd"; kvd=
[ $rc -eq 0 ] || { cat "$work/resp.log" "$work/kvd.log"; fail "RESP requests to twinwire-kvd over unixsock failed ($rc)"; }
grep -q unixsock "$work/kvd.log" || { cat "$work/kvd.log"; fail "twinwire-kvd does not say it serves unixsock"; }
echo "ok: twinwire-kvd with transport = unixsock answers RESP requests over it"
