#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: install what is missing,
# build, then start twinwire-kvd with its default configuration
# (transport = auto) and drive it with `twinwire-bench resp` over whatever
# transport auto chose, printing which one and why, then the figures.
#
# Then the same once more inside a SoftRoCE guest (real RDMA verbs on an
# emulated rxe device), where auto chooses RDMA. When no guest can run here
# that part is skipped and the reason printed.
#
#   tools/demo.sh            BUILD_DIR (default: build) picks the build directory
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
build=${BUILD_DIR:-build}
[[ $build = /* ]] || build=$root/$build
# Binaries in the build tree have no plugin directory compiled in: name the
# one the build made (the guest inherits this environment).
export TWINWIRE_PLUGIN_PATH=$build/rdma_plugin

step() { printf '\n=== %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

# demo_once LISTEN_IP SOURCE_IP REQUESTS LABEL: one daemon, one load, one
# verdict; LABEL says where the figures come from.
demo_once() {
  local listen=$1 source=$2 requests=$3 label=$4 port=7379 work pid rc
  work=$(mktemp -d)
  # Default configuration; only the address differs inside the guest, where
  # the RDMA device sits on the guest's wire, not on the loopback.
  TWINWIRE_LISTEN_ADDRESS=$listen "$build/tools/kvd/twinwire-kvd" >"$work/kvd.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do
    grep -q 'serving on' "$work/kvd.log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -q 'serving on' "$work/kvd.log"; then
    cat "$work/kvd.log"
    kill "$pid" 2>/dev/null
    rm -rf "$work"
    die "twinwire-kvd did not start"
  fi
  echo "twinwire-kvd (default configuration, transport = auto) says:"
  grep -E '\[(transport|kvd)\]' "$work/kvd.log" | sed 's/^[^ ]* twinwire\[[0-9]*\] /  /'

  echo
  echo "twinwire-bench resp (transport = auto, 50 clients, SET then GET, pipelined 1 and 16)"
  echo "$label:"
  local args=(resp --host "$listen" --port "$port" --transport auto --clients 50 --tests set,get)
  [ -n "$source" ] && args+=(--source "$source")
  "$build/tools/bench/twinwire-bench" "${args[@]}" --requests "$requests" --pipeline 1 2>/dev/null
  rc=$?
  "$build/tools/bench/twinwire-bench" "${args[@]}" --requests $((requests * 8)) --pipeline 16 2>/dev/null |
    sed -n '/^test /,$p'
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1

  kill -TERM "$pid"
  wait "$pid"
  echo
  echo "twinwire-kvd stopped on SIGTERM with exit status $? (it drains its clients first)"
  rm -rf "$work"
  return $rc
}

if [ "${1:-}" = --inside-guest ]; then
  demo_once "$SOFTROCE_SERVER_IP" "$SOFTROCE_CLIENT_IP" 4000 \
    "EMULATED figures (QEMU without KVM, software RoCE): they show RDMA working end to end, not its speed; not comparable with the host figures"
  exit $?
fi

cd "$root" || exit 1
TW_ROOT=$root
# shellcheck source=tests/setup-lib.sh
. "$root/tests/setup-lib.sh"

step "packages"
install_packages || die "package installation failed"
step "build ($build)"
configure "$build" || die "meson configuration failed"
meson compile -C "$build" || die "build failed"

step "on this machine"
demo_once 127.0.0.1 "" 100000 "figures of this host (loopback, no emulation)" || die "the load run reported errors"

step "in a SoftRoCE guest (real verbs on an emulated rxe device): EMULATED, not comparable with the figures above"
if tools/softroce/softroce-run --check >/dev/null 2>&1 || tools/softroce/softroce-run --setup >/dev/null 2>&1; then
  (cd "$build" && "$root/tools/softroce/softroce-run" --share "$build" --share "$root" -- "$root/tools/demo.sh" --inside-guest)
  rc=$?
  [ $rc = 0 ] || die "the guest run failed (exit status $rc)"
else
  echo "skipped: $(tools/softroce/softroce-run --check 2>&1 | tail -n 1)"
fi
