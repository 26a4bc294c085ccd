#!/usr/bin/env bash
# Streams over RDMA from client after client to one twinwire-bench server,
# with adaptive rings (32 KiB / 16 KiB growing to 16 MiB, the defaults) on
# both ends, and counts connections that did not finish: the reproduction of
# the reset of docs/rdma-design.md §14 (rxe replaying finished binds when it
# retransmits, section 3 "Window operations").  Runs the SoftRoCE guest
# itself; logs (server and clients at debug level) go to OUT.
#
#   tools/lab/ring-growth-stress.sh [--runs N] [--out DIR] TWINWIRE_BENCH
#
# Prints one line per connection and "N of M connections failed"; exits 1
# when any failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=16 out=/tmp/ring-growth-stress
while [ $# -gt 1 ]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "usage: $0 [--runs N] [--out DIR] TWINWIRE_BENCH" >&2; exit 2 ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--runs N] [--out DIR] TWINWIRE_BENCH" >&2; exit 2; }
bench=$(realpath "$1")
mkdir -p "$out"
if [ -z "${SOFTROCE_SERVER_IP:-}" ]; then
    exec "$here/../softroce/softroce-run" --share "$out" --timeout 3600 -- \
        "$here/ring-growth-stress.sh" --runs "$runs" --out "$out" "$bench"
fi
plugin_dir=$(dirname "$bench")/../../rdma_plugin
export TWINWIRE_PLUGIN_PATH=${TWINWIRE_PLUGIN_PATH:-$(realpath "$plugin_dir")} TWINWIRE_CONNECT_TIMEOUT_MS=10000
# The ring sizes are left at the defaults: this reproduces what a default
# configuration does.
export TWINWIRE_LOG_LEVEL=debug
"$bench" server --transport rdma --listen "$SOFTROCE_SERVER_IP" --port 7400 >"$out/server.log" 2>&1 &
server=$!
sleep 2
failed=0
for n in $(seq "$runs"); do
    iterations=$(( n % 2 ? 5000 : 20000 ))
    "$bench" client --transport rdma --host "$SOFTROCE_SERVER_IP" --port 7400 --source "$SOFTROCE_CLIENT_IP" --json \
        --test throughput --sizes 4096 --iterations "$iterations" >"$out/client-$n.json" 2>"$out/client-$n.log"
    line=$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["throughput"][0]
print("%.2f MB/s" % t["mb_per_s"], "; ".join(t["errors"][:1]) or "ok")' "$out/client-$n.json" 2>/dev/null) ||
        line="no result"
    echo "connection $n ($iterations x 4 KiB): $line"
    case $line in *MB/s\ ok) ;; *) failed=$((failed + 1)) ;; esac
done
kill "$server" 2>/dev/null
echo "$failed of $runs connections failed"
[ "$failed" -eq 0 ]
