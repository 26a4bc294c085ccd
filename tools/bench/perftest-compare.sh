#!/usr/bin/env bash
# twinwire-bench --transport rdma beside perftest, in ONE SoftRoCE guest:
# 64 B ping-pong latency against ib_send_lat, 4 KiB and 64 KiB streaming
# against ib_send_bw and ib_write_bw, alternating the tools round after
# round.  Writes OUT/raw.tsv (every figure), OUT/logs/ (every run's output)
# and OUT/summary.md (medians and twinwire/perftest ratios), and prints the
# summary.  `meson test -C build --benchmark --suite bench` runs it on the
# build tree (OUT = build/tools/bench/perftest-compare).
#
# usage: perftest-compare.sh [--rounds N] [--cpus N] [--rma] [--out DIR] [--runner-arg ARG]... TWINWIRE_BENCH
# --rma: instead of the rows above, one-sided RDMA READ / WRITE at 64 KiB and
# 1 MiB against ib_read_bw / ib_write_bw (the RDMA plugin's native rma_post,
# driven by rdma-tests --child rma-bench-client from the same build tree).
# --cpus: the guest's vCPUs (default 1, the runner's default); the summary
# states it, since the vCPU count changes the ratios.
# Exit: 0 done; 1 a run failed (the summary still shows the rest); 77 no
# SoftRoCE guest or no perftest here (the reason is printed).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
runner=$here/../softroce/softroce-run
rounds=3
cpus=1
rma=
out=
runner_args=()
while [ $# -gt 1 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --cpus) cpus=$2; shift 2 ;;
        --rma) rma=rma; shift ;;
        --out) out=$2; shift 2 ;;
        --runner-arg) runner_args+=("$2"); shift 2 ;;
        *) echo "perftest-compare: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: perftest-compare.sh [--rounds N] [--cpus N] [--rma] [--out DIR] [--runner-arg ARG]... TWINWIRE_BENCH" >&2; exit 2; }
bench=$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")
case $rounds in '' | *[!0-9]* | 0) echo "perftest-compare: --rounds wants a positive number" >&2; exit 2 ;; esac
case $cpus in '' | *[!0-9]* | 0) echo "perftest-compare: --cpus wants a positive number" >&2; exit 2 ;; esac
out=${out:-$PWD/perftest-compare}

tools=(ib_send_lat ib_send_bw ib_write_bw python3)
[ -n "$rma" ] && tools=(ib_read_bw ib_write_bw python3)
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (Debian: perftest, python3)"; exit 77; }
done
[ -x "$bench" ] || { echo "perftest-compare: $bench is not an executable" >&2; exit 2; }
plugin=$(dirname "$(dirname "$(dirname "$bench")")")/rdma_plugin/twinwire-rdma-abi1.so
[ -f "$plugin" ] || { echo "SKIP: the RDMA plugin was not built ($plugin is missing)"; exit 77; }
rma_tool=$(dirname "$(dirname "$(dirname "$bench")")")/tests/rdma/rdma-tests
[ -z "$rma" ] || [ -x "$rma_tool" ] || { echo "SKIP: --rma needs $rma_tool (built with the RDMA plugin)"; exit 77; }

# The plugin beside the bench, unless the caller (meson devenv) named it.
export TWINWIRE_PLUGIN_PATH=${TWINWIRE_PLUGIN_PATH:-$(dirname "$plugin")}
rm -rf "$out"
mkdir -p "$out"
started=$(date +%s)
host_load=$(cut -d' ' -f1-3 /proc/loadavg)
"$runner" --share "$out" --timeout 5400 --cpus "$cpus" "${runner_args[@]}" -- \
    "$here/perftest-compare-guest.sh" "$bench" "$out" "$rounds" ${rma:+"$rma_tool"}
status=$?
[ $status -eq 77 ] && exit 77
echo "perftest-compare: guest run took $(( $(date +%s) - started )) s, status $status; raw figures in $out/raw.tsv" >&2
[ -f "$out/raw.tsv" ] || exit 1
{
    echo "Guest: $cpus vCPU(s) (softroce-run --cpus $cpus), $rounds rounds${rma:+, RMA rows}; host load average at the start: $host_load"
    echo
    python3 -B "$here/perftest-summary.py" "$out/raw.tsv" || status=1
} >"$out/summary.md"
cat "$out/summary.md"
exit $status
