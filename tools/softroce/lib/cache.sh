# shellcheck shell=bash
# The guest kernel and initramfs, built once from Debian packages and kept in
# $CACHE (sourced by softroce-run; needs common.sh and $SOFTROCE_DIR).
#
# $CACHE/<kernel package>/ holds vmlinuz, vmlinux (uncompressed, for a PVH
# direct boot: about 3x faster to boot than the bzImage under TCG),
# initramfs.gz (static busybox + the modules of guest/initramfs-modules),
# kver and stamp; $CACHE/current points at the one in use.

CACHE=${SOFTROCE_RUN_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/twinwire-softroce}
# Bump when the way the cache is built changes.
CACHE_BUILDER=1

# Identifies what the cache was built from: a change rebuilds it.
cache_stamp() {
  { echo "builder $CACHE_BUILDER"; cat "$SOFTROCE_DIR/guest/init" "$SOFTROCE_DIR/guest/initramfs-modules"; } |
    sha256sum | cut -c1-16
}

cache_ok() {
  local d=$CACHE/current
  [ -f "$d/vmlinuz" ] && [ -f "$d/initramfs.gz" ] && [ -f "$d/kver" ] &&
    [ "$(cat "$d/stamp" 2>/dev/null)" = "$(cache_stamp)" ]
}

initramfs_modules() {
  sed 's/#.*//' "$SOFTROCE_DIR/guest/initramfs-modules" | tr -s ' \t' '\n\n' | sed '/^$/d'
}

# The versioned package behind linux-image-amd64 (for example
# linux-image-6.1.0-56-amd64).
kernel_package() {
  local p
  p=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: *\(linux-image-[0-9][^ ]*\).*/\1/p' | head -n1)
  if [ -z "$p" ] && is_root; then
    apt-get update -q >&2 || true
    p=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: *\(linux-image-[0-9][^ ]*\).*/\1/p' | head -n1)
  fi
  [ -n "$p" ] || no_guest "cannot resolve linux-image-amd64 with apt-cache (no package lists; run apt-get update as root)"
  printf '%s\n' "$p"
}

download_debs() { # dir packages...
  local dir=$1
  shift
  # apt's sandbox user must be able to write here
  chmod 755 "$dir"
  ( cd "$dir" && apt-get download -q -o APT::Sandbox::User=root "$@" >&2 )
}

# Copies the modules listed in guest/initramfs-modules, with their
# dependencies, from the unpacked kernel package into the initramfs root.
copy_modules() { # moddir rootdir kver bb
  local mdir=$1 rdir=$2 kver=$3 bb=$4 m deps deps_list f want=()
  for m in $(initramfs_modules); do
    m=${m//-/_}
    # modules.dep lines: kernel/path/name.ko[.xz]: dep1.ko dep2.ko
    deps=$(awk -v m="$m" -F': *' '{ n=$1; sub(/.*\//, "", n); sub(/\.ko.*$/, "", n); gsub(/-/, "_", n);
                                   if (n == m) { print $1; if ($2 != "") print $2 } }' "$mdir/modules.dep" | tr ' ' '\n')
    [ -n "$deps" ] || { msg "note: module $m is not in this kernel (skipped)"; continue; }
    mapfile -t deps_list <<<"$deps"
    want+=("${deps_list[@]}")
  done
  for f in $(printf '%s\n' "${want[@]}" | sort -u); do
    mkdir -p "$rdir/lib/modules/$kver/$(dirname "$f")"
    cp "$mdir/$f" "$rdir/lib/modules/$kver/$f"
  done
  for f in modules.builtin modules.order modules.builtin.modinfo; do
    [ -f "$mdir/$f" ] && cp "$mdir/$f" "$rdir/lib/modules/$kver/"
  done
  "$bb" depmod -b "$rdir" "$kver"
}

# Writes an uncompressed vmlinux next to vmlinuz when the bzImage carries an
# xz payload with a PVH entry (the Xen note); otherwise the bzImage is booted.
extract_vmlinux() { # dir
  local dir=$1 off
  off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$dir/vmlinuz" | head -n1 | cut -d: -f1)
  if [ -n "$off" ]; then
    # xz stops after the first stream, so tail may die of SIGPIPE: judge the
    # result, not the pipeline's status
    tail -c +$((off + 1)) "$dir/vmlinuz" | xz -dc --single-stream >"$dir/vmlinux" 2>/dev/null
    if [ "$(head -c 4 "$dir/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] &&
      LC_ALL=C grep -qaF 'Xen' "$dir/vmlinux"; then
      return 0
    fi
  fi
  msg "note: no PVH vmlinux extracted; booting the bzImage (slower)"
  rm -f "$dir/vmlinux"
}

build_cache() {
  local kpkg kver work bb dest
  command -v apt-get >/dev/null || no_guest "apt-get not found: the guest kernel comes from the Debian archive"
  kpkg=$(kernel_package)
  work=$(mktemp -d "$CACHE/.build.XXXXXX")
  CLEANUP_DIRS+=("$work")
  msg "building the guest cache in $CACHE from $kpkg (one time, about 70 MB download)"
  # stale package lists are the usual cause worth a retry; only root can
  # refresh them
  if ! download_debs "$work" "$kpkg" busybox-static &&
    ! { is_root && { apt-get update -q >&2 || true; } && download_debs "$work" "$kpkg" busybox-static; }; then
    no_guest "apt-get download $kpkg busybox-static failed (no network to the Debian archive?)"
  fi
  dpkg -x "$work"/linux-image-*.deb "$work/k"
  dpkg -x "$work"/busybox-static_*.deb "$work/bb"
  rm -f "$work"/*.deb
  bb=$work/bb/bin/busybox
  kver=$(ls "$work/k/lib/modules" | head -n1)
  [ -n "$kver" ] && [ -f "$work/k/boot/vmlinuz-$kver" ] || no_guest "unexpected layout of $kpkg (no /boot/vmlinuz)"
  "$bb" depmod -b "$work/k" "$kver"

  local rdir=$work/root
  mkdir -p "$rdir"/{bin,dev,proc,sys,ctl,lower,upper,newroot,tmp}
  cp "$bb" "$rdir/bin/busybox"
  copy_modules "$work/k/lib/modules/$kver" "$rdir" "$kver" "$bb"
  install -m 755 "$SOFTROCE_DIR/guest/init" "$rdir/init"
  (cd "$rdir" && find . | "$bb" cpio -o -H newc 2>/dev/null) | gzip -6 >"$work/initramfs.gz"

  dest=$CACHE/$kpkg
  rm -rf "$dest.new"
  mkdir -p "$dest.new"
  cp "$work/k/boot/vmlinuz-$kver" "$dest.new/vmlinuz"
  extract_vmlinux "$dest.new"
  mv "$work/initramfs.gz" "$dest.new/initramfs.gz"
  printf '%s\n' "$kver" >"$dest.new/kver"
  cache_stamp >"$dest.new/stamp"
  rm -rf "$dest"
  mv "$dest.new" "$dest"
  ln -sfn "$kpkg" "$CACHE/current"
  rm -rf "$work"
  msg "guest cache ready: $dest ($(du -sh "$dest" | cut -f1))"
}

# Builds the cache when it is missing or stale; concurrent first runs wait
# for each other.
ensure_cache() { # rebuild(0|1)
  if [ "$1" = 1 ] || ! cache_ok; then
    mkdir -p "$CACHE" || no_guest "cannot create the cache directory $CACHE"
    exec 8>"$CACHE/.lock"
    flock 8
    if [ "$1" = 1 ] || ! cache_ok; then build_cache; fi
    flock -u 8
    exec 8>&-
  fi
}
