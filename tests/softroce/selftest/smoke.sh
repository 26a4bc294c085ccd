#!/bin/bash
# Runs inside the guest (softroce-run -- smoke.sh): checks that the guest
# gives the RDMA suites what they rely on: two active SoftRoCE devices, and
# rdma_cm traffic between them that really crosses the veth wire.
set -u
fail() { echo "FAIL: $*"; exit 1; }
[ "${SOFTROCE_VM:-}" = 1 ] || { echo "SKIP: not inside a softroce-run guest"; exit 77; }
[ "${SOFTROCE_TOPOLOGY:-}" = wire ] || fail "expected the wire topology, got '${SOFTROCE_TOPOLOGY:-}'"

devices=$(ibv_devices) || fail "ibv_devices failed"
for dev in rxe0 rxe1; do
  grep -qw "$dev" <<<"$devices" || fail "ibv_devices does not list $dev:
$devices"
  info=$(ibv_devinfo -d "$dev") || fail "ibv_devinfo -d $dev failed"
  grep -Eq 'state:[[:space:]]+PORT_ACTIVE' <<<"$info" || fail "$dev port is not ACTIVE:
$info"
  echo "ok: $dev is listed and its port is ACTIVE"
done

tx_packets() { cat "/sys/class/net/$1/statistics/tx_packets"; }
sr0_before=$(tx_packets sr0)
sr1_before=$(tx_packets sr1)

pings=20
rping -s -V -a "$SOFTROCE_SERVER_IP" -C $pings -S 4096 >/tmp/rping-server.log 2>&1 &
server=$!
# rping has no readiness signal: wait until its cm_id listens (a bounded
# wait for readiness, not a timing assertion)
for _ in $(seq 1 300); do
  rdma resource show cm_id 2>/dev/null | grep -q LISTEN && break
  kill -0 $server 2>/dev/null || break
  sleep 0.1
done
rdma resource show cm_id 2>/dev/null | grep -q LISTEN || {
  cat /tmp/rping-server.log
  fail "the rping server never listened on $SOFTROCE_SERVER_IP"
}

# -I binds the source address: without it rdma_cm would put both ends on rxe1
rping -c -v -V -I "$SOFTROCE_CLIENT_IP" -a "$SOFTROCE_SERVER_IP" -C $pings -S 4096 >/tmp/rping-client.log 2>&1
client_rc=$?
wait $server
server_rc=$?
[ $client_rc = 0 ] || { cat /tmp/rping-client.log; fail "rping client exited $client_rc"; }
[ $server_rc = 0 ] || { cat /tmp/rping-server.log; fail "rping server exited $server_rc"; }
got=$(grep -c 'ping data' /tmp/rping-client.log)
[ "$got" = $pings ] || { cat /tmp/rping-client.log; fail "expected $pings validated pings, got $got"; }
echo "ok: rping $SOFTROCE_CLIENT_IP -> $SOFTROCE_SERVER_IP: $pings pings of 4096 bytes validated, both ends exited 0"

# Each ping is several RoCE packets each way; on a loopback path these
# counters would not move at all.
sr0_sent=$(($(tx_packets sr0) - sr0_before))
sr1_sent=$(($(tx_packets sr1) - sr1_before))
[ $sr0_sent -ge $pings ] && [ $sr1_sent -ge $pings ] ||
  fail "the traffic did not cross the wire: sr0 sent $sr0_sent packets, sr1 $sr1_sent"
echo "ok: the traffic crossed the wire (sr0 sent $sr0_sent packets, sr1 $sr1_sent)"
