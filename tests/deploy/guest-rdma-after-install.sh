#!/bin/bash
# The guest half of rdma-after-install.sh, run by softroce-run: twinwire-kvd
# in ROOT serves TCP while the RDMA package is missing, and RDMA once apt has
# installed it from the root's package cache.
#
#   guest-rdma-after-install.sh ROOT RDMA_DEB_IN_ROOT KVD_PROBE
set -u -o pipefail
root=$1 rdma_deb=$2 probe=$3
here=$(dirname "$(readlink -f "$0")")
. "$here/common.sh"
. "$here/root.sh"
[ -n "${SOFTROCE_SERVER_IP:-}" ] || die "SOFTROCE_SERVER_IP is not set: run me through softroce-run"

# Starts the daemon with the packaged configuration, listening where the
# RDMA client reaches it; sets PID and PORT, or fails.
start_kvd() { # log-name
    local log=$root/$1
    rm -f "$log"
    in_root "$root" twinwire-kvd --config /etc/twinwire/kvd.conf --port 0 --bind "$SOFTROCE_SERVER_IP" \
        --log-file "/$1" 2>"$root/$1.stderr" &
    PID=$!
    if ! until_true 120 grep -qs ' serving on ' "$log"; then
        kill "$PID" 2>/dev/null
        die "twinwire-kvd did not start: $(cat "$log" "$log.stderr" 2>/dev/null)"
    fi
    PORT=$(serving_port "$log")
}

stop_kvd() {
    kill -TERM "$(started_in_root "$PID")"
    wait "$PID" || fail "twinwire-kvd exited $? on SIGTERM"
}

binaries_sum() {
    (cd "$root" && sha256sum usr/bin/twinwire-kvd usr/lib/*/libtwinwire.so.1.*)
}

# 1. Without the RDMA package, on a host that has RDMA devices.
[ -n "$(ls /sys/class/infiniband 2>/dev/null)" ] || die "the guest lists no RDMA device"
start_kvd before.log
grep -q "serving on $SOFTROCE_SERVER_IP:$PORT over tcp " "$root/before.log" &&
    ok "before the RDMA package: serves over TCP" || fail "before the RDMA package: $(cat "$root/before.log")"
why=$(grep '\[transport\] using ' "$root/before.log")
grep -Eq 'using tcp: RDMA plugin not loaded: twinwire-rdma-abi1\.so not found .*falling back to TCP' <<<"$why" &&
    ok "and says why in one line: $why" || fail "no line says why it serves TCP: $(cat "$root/before.log")"
reply=$(redis-cli -h "$SOFTROCE_SERVER_IP" -p "$PORT" PING 2>&1)
[ "$reply" = PONG ] && ok "redis-cli PING over TCP: PONG" || fail "redis-cli PING answered: $reply"
stop_kvd
sum_before=$(binaries_sum)

# 2. apt-get install of the RDMA transport. The guest has no network: apt
# finds every package it needs already in the root's cache. (Not
# --no-download: apt 2.6 then refuses the local .deb, "Pathname to install
# is not absolute".)
if root_apt "$root" install "$rdma_deb"; then
    ok "apt-get install $rdma_deb (offline, in the guest)"
else
    die "apt-get install $rdma_deb failed: $(tail -n 20 "$root/apt.log")"
fi
for p in twinwire-transport-rdma libibverbs1 librdmacm1 ibverbs-providers; do
    in_root "$root" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        fail "$p is not installed after apt-get install $rdma_deb"
done
[ "$(binaries_sum)" = "$sum_before" ] && ok "twinwire-kvd and libtwinwire are the same files as before" ||
    fail "installing the RDMA package changed twinwire-kvd or libtwinwire"

# 3. The same daemon, the same configuration: RDMA.
start_kvd after.log
grep -q "serving on $SOFTROCE_SERVER_IP:$PORT over rdma" "$root/after.log" &&
    ok "after the RDMA package: serves over RDMA" || fail "after the RDMA package: $(cat "$root/after.log")"
grep -q '\[transport\] using rdma: transport = auto' "$root/after.log" &&
    ok "and says so: $(grep '\[transport\] using ' "$root/after.log")" || fail "no line says it uses RDMA: $(cat "$root/after.log")"
rdma() { "$probe" --host "$SOFTROCE_SERVER_IP" --port "$PORT" --transport rdma --source "$SOFTROCE_CLIENT_IP" "$@" 2>&1; }
reply=$(rdma --show-transport PING)
grep -q PONG <<<"$reply" && ok "an RDMA client's PING: $(echo $reply)" || fail "RDMA PING answered: $reply"
reply=$(rdma SET deployed "over RDMA")
[ "$reply" = OK ] && ok "an RDMA client's SET: OK" || fail "RDMA SET answered: $reply"
reply=$(rdma GET deployed)
[ "$reply" = "over RDMA" ] && ok "an RDMA client's GET returns the value" || fail "RDMA GET answered: $reply"
reply=$(redis-cli -h "$SOFTROCE_SERVER_IP" -p "$PORT" GET deployed 2>&1)
[ "$reply" = "over RDMA" ] && ok "redis-cli over TCP sees it too" || fail "redis-cli GET answered: $reply"
stop_kvd
finish
