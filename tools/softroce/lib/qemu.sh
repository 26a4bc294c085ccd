# shellcheck shell=bash
# The qemu command line and its run under a watchdog (sourced by
# softroce-run; needs common.sh, host.sh, cache.sh).

# qemu's option parser splits on commas; a comma in a value is doubled.
qemu_value() { printf '%s' "${1//,/,,}"; }

# Fills the array QEMU. Uses RUN (per-run directory), MEM, CPUS, ACCEL,
# VERBOSE and SHARES.
qemu_command() {
  local kernel=$CACHE/current/vmlinux append i
  [ -f "$kernel" ] || kernel=$CACHE/current/vmlinuz
  append="console=ttyS0 panic=-1 rdinit=/init tsc=reliable i8042.noaux i8042.nokbd i8042.nopnp"
  # quiet still lets errors (RCU stalls, lockups) reach the console log that
  # a failed run shows
  [ "$VERBOSE" = 1 ] || append+=" quiet"
  # SOFTROCE_RUN_APPEND: more kernel arguments, for experiments (idle=poll)
  append+=${SOFTROCE_RUN_APPEND:+ $SOFTROCE_RUN_APPEND}
  # No network card at all: the guest's only links are made inside it.
  QEMU=("$QEMU_BIN" -nodefaults -no-user-config -display none -monitor none -no-reboot
    -M q35 -m "$MEM" -smp "$CPUS"
    -kernel "$kernel" -initrd "$CACHE/current/initramfs.gz" -append "$append"
    -nic none
    -serial "file:$(qemu_value "$RUN/console.log")"
    -device virtio-serial-pci
    -chardev "file,id=cout,path=$(qemu_value "$RUN/out")" -device virtserialport,chardev=cout,name=out
    -chardev "file,id=cerr,path=$(qemu_value "$RUN/err")" -device virtserialport,chardev=cerr,name=err
    -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
    -virtfs "local,path=$(qemu_value "$RUN/ctl"),mount_tag=ctl,security_model=none"
    -device virtio-rng-pci)
  for i in "${!SHARES[@]}"; do
    QEMU+=(-virtfs "local,path=$(qemu_value "${SHARES[$i]}"),mount_tag=share$i,security_model=none,multidevs=remap")
  done
  if [ "$ACCEL" = kvm ]; then
    QEMU+=(-accel kvm -cpu host)
  else
    # TCG runs rep movsb/stosb one byte per step: with ERMS/FSRM advertised,
    # glibc's memcpy of 64 KiB ran at 416 MB/s in the guest, without them at
    # 2.8 GB/s (twinwire-copy-speed); on real CPUs both are equally fast.
    QEMU+=(-accel tcg,thread=multi,tb-size=256 -cpu "${SOFTROCE_RUN_CPU:-max,erms=off,fsrm=off}")
  fi
}

# Runs QEMU with the guest's stdout/stderr streamed to ours. Sets QEMU_RC and
# TIMED_OUT (0|1). qemu stays in our process group, so a test harness that
# signals the group (Meson on its timeout) stops the guest too.
run_qemu() { # timeout-seconds (0: none)
  local limit=$1 cat_out cat_err tail_pid='' sleep_pid=''
  mkfifo "$RUN/out" "$RUN/err"
  cat "$RUN/out" &
  cat_out=$!
  cat "$RUN/err" >&2 &
  cat_err=$!
  if [ "$VERBOSE" = 1 ]; then
    : >"$RUN/console.log"
    tail -n +1 -F "$RUN/console.log" >&2 2>/dev/null &
    tail_pid=$!
  fi
  TIMED_OUT=0
  "${QEMU[@]}" </dev/null >"$RUN/qemu.log" 2>&1 &
  QPID=$!
  if [ "$limit" -gt 0 ]; then
    sleep "$limit" </dev/null >/dev/null 2>&1 &
    sleep_pid=$!
    SLEEP_PID=$sleep_pid
  fi
  wait -n "$QPID" $sleep_pid
  if kill -0 "$QPID" 2>/dev/null; then
    TIMED_OUT=1
    kill -TERM "$QPID" 2>/dev/null
    local n
    for n in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$QPID" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$QPID" 2>/dev/null
  fi
  wait "$QPID"
  QEMU_RC=$?
  QPID=
  [ -n "$sleep_pid" ] && kill "$sleep_pid" 2>/dev/null
  SLEEP_PID=
  # if qemu never opened the fifos, their readers still wait for a writer
  exec 3<>"$RUN/out" 4<>"$RUN/err"
  exec 3>&- 4>&-
  wait "$cat_out" "$cat_err" 2>/dev/null
  if [ -n "$tail_pid" ]; then
    sleep 0.2
    kill "$tail_pid" 2>/dev/null
  fi
  return 0
}
