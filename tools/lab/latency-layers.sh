#!/usr/bin/env bash
# 64 B latency layer by layer, in ONE SoftRoCE guest, the tools alternating
# round by round:
#   ib_send_lat-e  raw verbs, sleeping on the completion channel (the anchor)
#   ib_send_lat-e+epoll     the same, both ends waiting in epoll_wait before each
#   ib_send_lat-e+libevent  completion event, or in a libevent loop turn: what
#                  any loop-based transport pays (twinwire-event-loop-shim.so,
#                  LD_PRELOAD)
#   ib_send_lat-e+epoll-once     the same two waits only before the call
#   ib_send_lat-e+libevent-once  that sleeps, once per round trip and side
#                  as twinwire's loop waits (the other call reads plainly;
#                  TW_SHIM_ONCE=1)
#   vtable         the RDMA plugin's C vtable on the framework's libevent loop,
#                  no Connection, no twinwire-bench (rdma-tests --child lat-bench-*)
#   bench-zc       twinwire-bench --zero-copy (borrowed receive, lent send buffers)
#   bench          twinwire-bench, the copying Connection path
# Each step up adds one layer, so the differences say where a round trip's
# time goes.  Writes OUT/raw.tsv and OUT/logs/ and prints, per tool, the
# median one-way p50 and the median of per-round ratios to ib_send_lat -e.
# Not run by meson; commands and results: docs/benchmarks.md.
#
# usage: latency-layers.sh [--rounds N] [--cpus N] [--iterations N] [--out DIR] TWINWIRE_BENCH
# TWINWIRE_BENCH is build/tools/bench/twinwire-bench of a build with the RDMA
# plugin and -Dlab=true; its tree also gives rdma-tests, the plugin and the shim.
# Exit: 0 done; 1 a run failed; 2 bad usage or no lab build (-Dlab=true); 77 no guest or no perftest here.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
runner=$here/../softroce/softroce-run
rounds=5 cpus=1 iterations=3000 out=$PWD/latency-layers
usage() { sed -n '/^# usage/,/^# Exit/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --cpus) cpus=$2; shift 2 ;;
        --iterations) iterations=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --*) usage ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || usage
bench=$(cd "$(dirname "$1")" 2>/dev/null && pwd -P)/$(basename "$1")
[ -x "$bench" ] || { echo "latency-layers: $1 is not an executable" >&2; exit 2; }
tree=$(dirname "$(dirname "$(dirname "$bench")")")
vtable=$tree/tests/rdma/rdma-tests
[ -f "$tree/rdma_plugin/twinwire-rdma-abi1.so" ] && [ -x "$vtable" ] ||
    { echo "SKIP: $tree has no RDMA plugin or rdma-tests (configure with rdma=enabled)"; exit 77; }
[ -f "$tree/tools/lab/twinwire-event-loop-shim.so" ] ||
    { echo "latency-layers: $tree/tools/lab/twinwire-event-loop-shim.so is not built: configure with -Dlab=true" >&2; exit 2; }
for tool in ib_send_lat taskset python3; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (Debian: perftest, python3)"; exit 77; }
done
rm -rf "$out"
mkdir -p "$out/logs"
echo "latency-layers: 64 B, $iterations round trips, $rounds rounds, $cpus vCPU(s); host load $(cut -d' ' -f1-3 /proc/loadavg)"
"$runner" --share "$out" --timeout 5400 --cpus "$cpus" -- \
    "$here/latency-layers-guest.sh" "$bench" "$vtable" "$out" "$rounds" "$iterations"
status=$?
[ $status -eq 77 ] && exit 77
[ -s "$out/raw.tsv" ] || { echo "latency-layers: no figures (guest exit $status)" >&2; exit 1; }
python3 - "$out/raw.tsv" <<'PY'
import collections, statistics, sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])][1:]
order = ['ib_send_lat-e', 'ib_send_lat-e+epoll', 'ib_send_lat-e+epoll-once', 'ib_send_lat-e+libevent',
         'ib_send_lat-e+libevent-once', 'vtable', 'bench-zc', 'bench']
base = {r: float(v) for r, t, v in rows if t == order[0]}
vals, ratios = collections.defaultdict(list), collections.defaultdict(list)
for r, t, v in rows:
    vals[t].append(float(v))
    if t != order[0] and r in base:
        ratios[t].append(float(v) / base[r])
print('| tool | median one-way p50 (us) | median of per-round ratios to ib_send_lat -e | per round |')
print('| --- | --- | --- | --- |')
for t in order:
    if t not in vals:
        continue
    rr = ratios.get(t, [])
    print(f'| {t} | {statistics.median(vals[t]):.2f} | '
          + (f'{statistics.median(rr):.2f} | {" ".join(f"{x:.2f}" for x in rr)} |' if rr else '- | - |'))
PY
exit $status
