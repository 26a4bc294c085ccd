#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs inside the SoftRoCE guest (tools/softroce): the daemon's integration
# cases over RDMA - first with transport = rdma, then with transport = auto,
# which must pick RDMA there - in one boot.  One TAP stream.
#
#   guest_rdma.sh KVD PROBE [BENCH]
set -u
KVD=$1 PROBE=$2 BENCH=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${SOFTROCE_SERVER_IP:-}" ] || [ -z "${SOFTROCE_CLIENT_IP:-}" ]; then
    echo "guest_rdma.sh: SOFTROCE_SERVER_IP / SOFTROCE_CLIENT_IP are not set: run me through softroce-run" >&2
    exit 2
fi

total=0 status=0
for mode in "rdma" "auto --expect rdma"; do
    # shellcheck disable=SC2086
    out=$("$HERE/integration.sh" "$KVD" "$PROBE" --transport $mode --host "$SOFTROCE_SERVER_IP" \
        --source "$SOFTROCE_CLIENT_IP" ${BENCH:+--bench "$BENCH"})
    [ $? -eq 0 ] || status=1
    # Renumber into one stream; each run's own plan line is dropped.
    out=$(printf '%s\n' "$out" | awk -v base="$total" -v mode="${mode%% *}" '
        /^(not )?ok [0-9]+/ { n++; sub(/ok [0-9]+ -/, "ok " base + n " - [" mode "]"); print; next }
        /^1\.\./ { next }
        { print }
        END { printf "#count %d\n", n }')
    printf '%s\n' "$out" | grep -v '^#count '
    total=$((total + $(printf '%s\n' "$out" | sed -n 's/^#count //p')))
done
echo "1..$total"
exit $status
