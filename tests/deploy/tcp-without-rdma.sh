#!/bin/bash
# A host without rdma-core, as docs/deploying.md promises: in a clean Debian
# 12 root (clean-root.sh), apt-get installs libtwinwire1 and twinwire-kvd
# from the project's packages and nothing of rdma-core; the daemon started
# with its packaged configuration (transport = auto) serves redis-cli over
# TCP and says in one log line why it does not use RDMA.
#
#   tcp-without-rdma.sh DEBS_DIR WORK_DIR SOURCE_DIR
#
# DEBS_DIR holds the packages (tests/packages/build-debs.sh --reuse builds
# them when they are missing or older than SOURCE_DIR's HEAD).
set -u -o pipefail
debs=$1 work=$2 src=$3
here=$(dirname "$(readlink -f "$0")")
. "$here/common.sh"
. "$here/clean-root.sh"
. "$here/root.sh"

command -v redis-cli >/dev/null || skip "no redis-cli (apt-get install redis-tools)"
"$src/tests/packages/build-debs.sh" --reuse "$debs" "$src"
case $? in 0) ;; 77) skip "the packages cannot be built here" ;; *) die "tests/packages/build-debs.sh failed" ;; esac

root=$work/tcp-root
prepare_root "$root" "$debs"
trap 'rm -rf "$root"' EXIT
install_debs "$root" libtwinwire1 twinwire-kvd
no_rdma_core "$root" "the root with libtwinwire1 and twinwire-kvd installed"
[ -z "$(find "$root/usr/lib" -path '*twinwire*' -name '*rdma*.so')" ] ||
    fail "the RDMA plugin is installed though twinwire-transport-rdma is not"

# The packaged configuration as it is; only the port is the test's own.
log=$root/kvd.log
in_root "$root" twinwire-kvd --config /etc/twinwire/kvd.conf --port 0 --log-file /kvd.log 2>"$work/kvd.stderr" &
pid=$!
if ! until_true 60 grep -qs ' serving on ' "$log"; then
    kill "$pid" 2>/dev/null
    die "twinwire-kvd did not start in the clean root: $(cat "$log" "$work/kvd.stderr" 2>/dev/null)"
fi
port=$(serving_port "$log")
ok "twinwire-kvd starts with /etc/twinwire/kvd.conf in the clean root"
grep -q "serving on 127.0.0.1:$port over tcp " "$log" || fail "it does not serve over TCP: $(cat "$log")"
why=$(grep '\[transport\] using ' "$log")
if [ "$(grep -c '\[transport\]' <<<"$why")" = 1 ] && grep -Eq 'using tcp: RDMA plugin not loaded: twinwire-rdma-abi1\.so not found .*falling back to TCP' <<<"$why"; then
    ok "one log line says why it serves TCP: $why"
else
    fail "no single log line naming why it serves TCP: $(cat "$log")"
fi

reply=$(redis-cli -p "$port" PING 2>&1)
[ "$reply" = PONG ] && ok "redis-cli PING: PONG" || fail "redis-cli PING answered: $reply"
reply=$(redis-cli -p "$port" SET deployed "from a clean root" 2>&1)
[ "$reply" = OK ] && ok "redis-cli SET: OK" || fail "redis-cli SET answered: $reply"
reply=$(redis-cli -p "$port" GET deployed 2>&1)
[ "$reply" = "from a clean root" ] && ok "redis-cli GET returns the value" || fail "redis-cli GET answered: $reply"

# The daemon is PID 1 of its namespace; unshare passes on its exit status.
kill -TERM "$(started_in_root "$pid")"
wait "$pid"
st=$?
[ $st = 0 ] && ok "twinwire-kvd exits 0 on SIGTERM" || fail "twinwire-kvd exited $st on SIGTERM: $(tail -n 5 "$log")"
finish
