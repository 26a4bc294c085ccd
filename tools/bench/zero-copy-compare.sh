#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# twinwire-bench --zero-copy beside the copying path, alternating round by
# round (compare-variants.sh, one group per transport: TRANSPORT/copy and
# TRANSPORT/zero-copy): `twinwire-bench local` latency and throughput at
# each size.  Writes OUT/raw.csv (every figure, with the io_path each run
# reported), OUT/logs/ and OUT/summary.md: medians per path and the median
# of per-round ratios zero-copy / copy.
#
# Host (loopback, pinned to one CPU):
#   tools/bench/zero-copy-compare.sh --bench build/tools/bench/twinwire-bench --out OUT --pin 1 --transports tcp
# SoftRoCE guest (both ends of the veth wire):
#   tools/softroce/softroce-run --share $PWD -- tools/bench/zero-copy-compare.sh --bench ... --out OUT \
#       --transports rdma,tcp --listen 10.77.0.2 --source 10.77.0.1
#
# [--rounds 5] [--sizes 64,4k,64k,1m] [--duration 1], and compare-variants.sh's other options
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
transports=tcp
args=()
while [ $# -gt 0 ]; do
    case $1 in
        --transports) transports=$2; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
variants=()
for t in ${transports//,/ }; do
    variants+=(--variant "$t/copy=--transport $t" --variant "$t/zero-copy=--transport $t --zero-copy")
done
exec "$here/compare-variants.sh" "${args[@]}" "${variants[@]}"
