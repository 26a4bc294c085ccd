#!/usr/bin/env bash
# What idle RDMA connections cost and whether they slow the active ones,
# in ONE SoftRoCE guest (issue 41): rdma-tests --child idle-bench holds both
# ends of IDLE idle connections and of ACTIVE ones that ping-pong 64 B, alone
# and then among the idle ones, ROUNDS times (the two runs alternate).
# Prints every run, the memory per idle connection end (the transport's
# counters and the kernel's `rdma resource show mr`), and the median of the
# per-round ratios p99(among idle) / p99(alone).
#
# usage: idle-connections.sh [--idle N] [--active N] [--rounds N] [--iterations N] [--mem SIZE] BUILD_DIR
# Defaults: 4096 idle, 16 active, 3 rounds, 2000 round trips per connection
# and run, a guest of 4 GiB.
# Exit: 0 every figure within issue 41's bounds (8 KiB per idle end by both
# counts, p99 ratio at most 1.5, every idle connection echoed); 1 a bound
# missed or a run failed; 77 no SoftRoCE guest here.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
runner=$here/../softroce/softroce-run
idle=4096 active=16 rounds=3 iterations=2000 mem=4G
while [ $# -gt 1 ]; do
    case $1 in
        --idle) idle=$2; shift 2 ;;
        --active) active=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --iterations) iterations=$2; shift 2 ;;
        --mem) mem=$2; shift 2 ;;
        *) echo "idle-connections: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: idle-connections.sh [--idle N] [--active N] [--rounds N] [--iterations N] [--mem SIZE] BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd -P)
tests=$build/tests/rdma/rdma-tests
[ -x "$tests" ] || { echo "SKIP: $tests was not built (the RDMA plugin is needed)"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cd "$build" && TWINWIRE_PLUGIN_PATH=$build/rdma_plugin "$runner" --share "$build" --mem "$mem" --timeout 5400 -- \
    sh -c "ulimit -n 65536; exec tests/rdma/rdma-tests --child idle-bench \$SOFTROCE_SERVER_IP \$SOFTROCE_CLIENT_IP $idle $active $rounds $iterations" \
    >"$out" 2>&1
rc=$?
grep -E '^(alone|among_idle|echoed|memory|idle-bench)' "$out"
[ $rc -eq 77 ] && { grep SKIP "$out"; exit 77; }
python3 - "$out" "$rc" "$idle" "$active" <<'PY'
import re, statistics, sys
text = open(sys.argv[1]).read()
rc, idle, active = int(sys.argv[2]), sys.argv[3], sys.argv[4]
alone = [float(m) for m in re.findall(r'^alone p50_us \S+ p99_us (\S+)', text, re.M)]
among = [float(m) for m in re.findall(r'^among_idle p50_us \S+ p99_us (\S+)', text, re.M)]
mem = [tuple(int(x) for x in m) for m in re.findall(
    r'^memory ends (\d+) in_use_per_end (\d+) registered_per_end (\d+) mr_per_end (-?\d+) mr_added_per_end (-?\d+)', text, re.M)]
ok = rc == 0 and len(among) > 0 and len(alone) == len(among)
ratios = [b / a for a, b in zip(alone, among)]
print(f"{idle} idle connections, {active} active, {len(ratios)} rounds")
if ratios:
    r = statistics.median(ratios)
    print("p99 among idle / alone, per round: " + ", ".join(f"{x:.2f}" for x in ratios) + f"; median {r:.2f} (bound 1.5)")
    ok = ok and r <= 1.5
for ends, in_use, reg, mr, added in mem:
    print(f"per idle connection end ({ends} ends): in use {in_use} B by the counters; registered {reg} B; "
          f"rdma resource show: {mr} B, of which the idle connections added {added} B (bound 8192)")
    ok = ok and in_use <= 8192 and 0 <= mr <= 8192
ok = ok and not re.search(r'^echoed.* (\d+) of (\d+)', text, re.M) is None and all(
    a == b for a, b in re.findall(r'^echoed.* (\d+) of (\d+)', text, re.M))
print("within issue 41's bounds" if ok else "OUTSIDE issue 41's bounds, or a run failed (exit status %d)" % rc)
sys.exit(0 if ok else 1)
PY
