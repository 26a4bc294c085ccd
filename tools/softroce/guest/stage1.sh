# Guest boot, stage 1 (busybox sh in the initramfs, run by /init from the
# per-run control share /ctl): builds the root the command will see and runs
# stage 2 in it.
#
#   /           the host's root over 9p, read-only, under a tmpfs overlay:
#               the guest runs the host's own binaries and libraries, and
#               its writes succeed but vanish with the guest
#   each share  a host directory over 9p, read-write, at its host path
#
# Markers in /ctl tell the host how far the guest got: booted, then
# stage2's started, then rc (the command's exit status).

: >/ctl/booted
. /ctl/config # KVER VERBOSE BOOT_MODULES
log() { [ "$VERBOSE" = 1 ] && echo "stage1: $*"; true; }
# Before the command starts, every failure means "no guest possible".
fail() {
  echo "$*" >/ctl/setup-failed
  poweroff -f
}

for m in overlay virtio_console $BOOT_MODULES; do modprobe $m 2>/dev/null || log "modprobe $m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /lower ||
  fail "cannot mount the host root over 9p"
mount -t tmpfs -o mode=755 tmpfs /upper
mkdir -p /upper/u /upper/w
if mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /newroot 2>/dev/null; then
  log "root: 9p + tmpfs overlay"
else
  log "overlay failed, using a read-only root"
  mount --bind /lower /newroot
fi

R=/newroot
mount -t proc proc $R/proc
mount -t sysfs sys $R/sys
# devtmpfs gives /dev/infiniband/uverbs* and rdma_cm once the modules load
mount -t devtmpfs dev $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 shm $R/dev/shm
mount -t tmpfs -o mode=755 run $R/run
[ -d $R/sys/kernel/config ] && mount -t configfs configfs $R/sys/kernel/config 2>/dev/null

# The host may have no kmod: busybox module tools go last on the PATH, and
# the initramfs' modules replace the host's (a different kernel).
G=$R/run/softroce
mkdir -p $G/ctl $G/bin
mount --bind /ctl $G/ctl
cp /bin/busybox $G/bin/busybox
for a in modprobe lsmod insmod rmmod modinfo; do ln -s busybox $G/bin/$a; done
if mkdir -p $R/lib/modules/$KVER 2>/dev/null; then
  mount --bind /lib/modules/$KVER $R/lib/modules/$KVER
  echo /run/softroce/bin/modprobe >/proc/sys/kernel/modprobe
fi

i=0
while IFS= read -r dir; do
  mkdir -p "$R$dir" 2>/dev/null
  mount -t 9p -o trans=virtio,version=9p2000.L,cache=mmap,msize=262144 share$i "$R$dir" ||
    fail "cannot mount the shared directory $dir"
  i=$((i + 1))
done </ctl/shares

# The command's stdout and stderr have a virtio-serial port each.
OUT=/dev/console ERR=/dev/console
for p in /sys/class/virtio-ports/*; do
  [ -f "$p/name" ] || continue
  case "$(cat $p/name)" in
    out) OUT=/dev/${p##*/} ;;
    err) ERR=/dev/${p##*/} ;;
  esac
done
log "stdout=$OUT stderr=$ERR"

chroot $R /bin/bash /run/softroce/ctl/stage2.sh </dev/null >$OUT 2>$ERR
rc=$?
# stage2 leaves the status to us only once the command has started
[ -f /ctl/started ] && echo $rc >/ctl/rc
log "exit status $rc"
sync
poweroff -f
