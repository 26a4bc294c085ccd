#!/usr/bin/env bash
# Builds of the RDMA plugin side by side in ONE SoftRoCE guest: the same
# twinwire-bench runs each variant (a directory holding its
# twinwire-rdma-abi1.so), in an order that alternates round by round, beside
# the perftest anchor of the test (ib_write_bw for throughput; ib_write_bw -b
# for bidirectional, beside twinwire-bench -b: both directions at once,
# summed; ib_send_lat -e for latency).  For a change to the plugin, or a constant of it, measured
# against the build before it.  Writes OUT/raw.tsv and OUT/logs/ and prints,
# per size and variant, the median and the median of per-round ratios to the
# anchor.  Not run by meson; commands and results: docs/benchmarks.md.
#
# usage: plugin-ab.sh [--rounds N] [--cpus N] [--test throughput|bidirectional|latency]
#                     [--sizes "65536 4096"] [--iterations N] [--out DIR] [--polling-anchor]
#                     [--set KEY=VALUE]... TWINWIRE_BENCH LABEL=PLUGIN_DIR[,KEY=VALUE]...
# --set gives every twinwire-bench (servers and clients) a setting, as its
# TWINWIRE_<KEY> environment variable (rdma.ring_max=0: TWINWIRE_RDMA_RING_MAX);
# KEY=VALUE after a variant's directory gives that variant's server and client
# a setting of their own (one plugin twice: off=DIR on=DIR,rdma.busy_poll_us=300).
# --polling-anchor (latency): each round also runs ib_send_lat without -e, the
# anchor for busy polling (reported beside, ratios stay to ib_send_lat -e).
# Latency runs pin servers to the last vCPU and clients to the first, as
# latency-layers.sh does (with one vCPU both share it).
# Exit: 0 done; 1 a run failed; 2 bad usage; 77 no guest or no perftest here.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
runner=$here/../softroce/softroce-run
rounds=3 cpus=1 test=throughput sizes= iterations= out=$PWD/plugin-ab settings=() polling_anchor=0
usage() { sed -n '/^# usage/,/^# Exit/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
env_name() { echo "TWINWIRE_$(echo "$1" | tr 'a-z.' 'A-Z_')"; } # rdma.ring_max -> TWINWIRE_RDMA_RING_MAX
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --cpus) cpus=$2; shift 2 ;;
        --test) test=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --iterations) iterations=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --polling-anchor) polling_anchor=1; shift ;;
        --set)
            case $2 in [a-z]*=*) ;; *) usage ;; esac
            key=${2%%=*}
            settings+=("$(env_name "$key")=${2#*=}")
            shift 2 ;;
        --*) usage ;;
        *) break ;;
    esac
done
[ $# -ge 2 ] || usage
case $test in
    throughput) anchor=ib_write_bw sizes=${sizes:-65536 4096} iterations=${iterations:-5000} ;;
    bidirectional) anchor=ib_write_bw-b sizes=${sizes:-65536 4096} iterations=${iterations:-5000} ;;
    latency) anchor=ib_send_lat-e sizes=${sizes:-64} iterations=${iterations:-3000} ;;
    *) usage ;;
esac
bench=$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")
shift
[ -x "$bench" ] || { echo "plugin-ab: $bench is not an executable" >&2; exit 2; }
variants=()
for v in "$@"; do
    label=${v%%=*} rest=${v#*=}
    [ "$label" != "$v" ] && [ -n "$label" ] || usage
    IFS=, read -r -a parts <<<"$rest"
    dir=$(cd "${parts[0]}" 2>/dev/null && pwd -P) && [ -f "$dir/twinwire-rdma-abi1.so" ] ||
        { echo "plugin-ab: no twinwire-rdma-abi1.so in ${parts[0]}" >&2; exit 2; }
    own=
    for kv in "${parts[@]:1}"; do
        case $kv in [a-z]*=*) ;; *) usage ;; esac
        own+=",$(env_name "${kv%%=*}")=${kv#*=}"
    done
    variants+=("$label=$dir$own")
done
for tool in "${anchor%-?}" python3; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (Debian: perftest, python3)"; exit 77; }
done
rm -rf "$out"
mkdir -p "$out/logs"
printf '%s\n' "${settings[@]}" >"$out/settings.env" # read by the guest half
[ $polling_anchor = 1 ] && [ "$test" = latency ] && : >"$out/polling-anchor"
echo "plugin-ab: $test, sizes $sizes, $iterations messages, $rounds rounds, $cpus vCPU(s); settings: ${settings[*]:-defaults}; host load $(cut -d' ' -f1-3 /proc/loadavg)"
"$runner" --share "$out" --timeout 5400 --cpus "$cpus" -- \
    "$here/plugin-ab-guest.sh" "$bench" "$out" "$rounds" "$test" "$sizes" "$iterations" "${variants[@]}"
status=$?
[ $status -eq 77 ] && exit 77
[ -s "$out/raw.tsv" ] || { echo "plugin-ab: no figures (guest exit $status)" >&2; exit 1; }
python3 - "$out/raw.tsv" "$anchor" <<'PY'
import collections, statistics, sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])][1:]
anchor = sys.argv[2]
base = {(r, s): float(v) for r, s, t, v in rows if t == anchor}
vals, ratios = collections.defaultdict(list), collections.defaultdict(list)
for r, s, t, v in rows:
    vals[(s, t)].append(float(v))
    if t != anchor and (r, s) in base:
        ratios[(s, t)].append(float(v) / base[(r, s)])
unit = 'us one way, p50' if anchor == 'ib_send_lat-e' else 'MB/s'
print(f'| size | run | median ({unit}) | median of per-round ratios to {anchor} | per round |')
print('| --- | --- | --- | --- | --- |')
for s, t in vals:
    rr = ratios.get((s, t), [])
    print(f'| {s} | {t} | {statistics.median(vals[(s, t)]):.2f} | '
          f'{statistics.median(rr):.2f} | {" ".join(f"{x:.2f}" for x in rr)} |' if rr else
          f'| {s} | {t} | {statistics.median(vals[(s, t)]):.2f} | - | - |')
PY
exit $status
