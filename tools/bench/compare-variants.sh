#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `twinwire-bench local` (server and client in one process) run with two or
# more sets of options, the variants, alternating round by round (the order
# rotates each round, so drift in the machine's load hits every variant
# alike): latency and throughput at each size.  Variants are compared in
# groups: a label GROUP/NAME belongs to GROUP (a label without / to the one
# group ""), and each variant is measured against the first of its group.
# Writes OUT/raw.csv (every figure, with the io_path each run reported),
# OUT/logs/, OUT/conditions.txt (uptime before and after) and OUT/summary.md
# (medians per variant and the median of per-round ratios to the group's
# first), and prints the summary.
#
# TLS against TCP on the host, pinned to one CPU (tls.* settings in FILE):
#   tools/bench/compare-variants.sh --bench build/tools/bench/twinwire-bench --out OUT --pin 1 \
#       --variant 'tcp=--transport tcp' --variant 'tls=--transport tls --config FILE'
#
# --variant 'LABEL=OPTIONS' (two or more)  [--rounds 5] [--sizes 64,4k,64k,1m]
# [--duration 1] [--listen 127.0.0.1] [--source ADDR] [--pin CPUS]
# Exit: 0 done; 1 a run failed or counted errors (the summary shows the rest).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
BENCH= OUT= ROUNDS=5 SIZES=64,4k,64k,1m DURATION=1 LISTEN=127.0.0.1 SOURCE= PIN=
labels=() options=()
while [ $# -gt 0 ]; do
    case $1 in
        --bench) BENCH=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --sizes) SIZES=$2; shift 2 ;;
        --duration) DURATION=$2; shift 2 ;;
        --listen) LISTEN=$2; shift 2 ;;
        --source) SOURCE=$2; shift 2 ;;
        --pin) PIN=$2; shift 2 ;;
        --variant)
            [[ $2 == *=* ]] || { echo "compare-variants: --variant wants LABEL=OPTIONS, not '$2'" >&2; exit 2; }
            labels+=("${2%%=*}"); options+=("${2#*=}"); shift 2 ;;
        *) echo "compare-variants: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$BENCH" ] && [ -n "$OUT" ] || { echo "compare-variants: give --bench and --out" >&2; exit 2; }
[ ${#labels[@]} -ge 2 ] || { echo "compare-variants: give at least two --variant" >&2; exit 2; }
mkdir -p "$OUT/logs"
pin=()
[ -n "$PIN" ] && pin=(taskset -c "$PIN")
source_arg=()
[ -n "$SOURCE" ] && source_arg=(--source "$SOURCE")

RAW=$OUT/raw.csv
echo "round,group,variant,test,size,p50_rt_us,mean_rt_us,mb_per_s,io_path" >"$RAW"
{
    echo "# $(date -u +%FT%TZ) $(uname -n), uptime: $(uptime)"
    echo "# pin: ${PIN:-none}"
    for i in "${!labels[@]}"; do echo "# ${labels[$i]}: ${options[$i]}"; done
} >"$OUT/conditions.txt"
failed=0
n=${#labels[@]}
for round in $(seq "$ROUNDS"); do
    for k in $(seq 0 $((n - 1))); do
        i=$(((k + round - 1) % n))
        label=${labels[$i]}
        file=${label//\//-}
        json=$OUT/logs/round$round-$file.json
        # shellcheck disable=SC2206 # the variant's options, split as a shell would
        opts=(${options[$i]})
        "${pin[@]}" "$BENCH" local --listen "$LISTEN" "${source_arg[@]}" --sizes "$SIZES" --duration "$DURATION" \
            "${opts[@]}" --json >"$json" 2>"$OUT/logs/round$round-$file.err" || failed=1
        python3 "$here/variant_rows.py" rows "$json" "$round" "$label" >>"$RAW" || failed=1
    done
    echo "# round $round done" >&2
done
echo "# after: $(uptime)" >>"$OUT/conditions.txt"
python3 "$here/variant_rows.py" summary "$RAW" "$OUT/summary.md" "$OUT/conditions.txt" "${labels[@]}" || failed=1
exit $failed
