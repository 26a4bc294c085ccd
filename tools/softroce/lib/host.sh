# shellcheck shell=bash
# What the host must provide for a guest: packages, qemu, an accelerator
# (sourced by softroce-run; needs common.sh and $SOFTROCE_DIR).

# The project's one list: next to the scripts when installed, in tests/ of
# the source tree.
PACKAGE_LIST=$SOFTROCE_DIR/debian-packages.txt
[ -r "$PACKAGE_LIST" ] || PACKAGE_LIST=$SOFTROCE_DIR/../../tests/debian-packages.txt
# Packages are installed only when asked (--setup, --install-packages or
# SOFTROCE_RUN_INSTALL_PACKAGES=1): run as a test, a missing package is a
# skip that names the apt-get line, never an install behind the user's back.
INSTALL_PACKAGES=${SOFTROCE_RUN_INSTALL_PACKAGES:-0}
QEMU_BIN=${SOFTROCE_RUN_QEMU:-qemu-system-x86_64}

# The packages of the project's one list that the guest needs.
guest_packages() {
  [ -r "$PACKAGE_LIST" ] || die "package list $PACKAGE_LIST is missing"
  awk '!/^[[:space:]]*(#|$)/ && $2 == "guest" { print $1 }' "$PACKAGE_LIST"
}

pkg_installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing_packages() {
  command -v dpkg-query >/dev/null || return 0 # not Debian: rely on the qemu check
  local p
  for p in $(guest_packages); do pkg_installed "$p" || printf '%s\n' "$p"; done
}

# Installs what the guest needs when asked to, or explains why no guest is
# possible and how to get what is missing.
ensure_host_packages() {
  local missing
  missing=$(missing_packages | tr '\n' ' ')
  missing=${missing% }
  [ -n "$missing" ] || return 0
  local line="apt-get install -y --no-install-recommends $missing"
  [ "$INSTALL_PACKAGES" = 1 ] ||
    no_guest "host packages missing: $missing; install them with: $line (as root), or run $PROG --setup"
  is_root || no_guest "packages missing ($missing) and not root to install them: $line"
  msg "installing host packages: $missing"
  export DEBIAN_FRONTEND=noninteractive
  # shellcheck disable=SC2086 # a list of package names
  if ! apt-get install -y -q --no-install-recommends $missing >&2; then
    apt-get update -q >&2 || true
    apt-get install -y -q --no-install-recommends $missing >&2 ||
      no_guest "apt-get install $missing failed (is the Debian archive reachable?)"
  fi
}

ensure_qemu() {
  command -v "$QEMU_BIN" >/dev/null || no_guest "no $QEMU_BIN (package qemu-system-x86)"
}

KVM_WHY="no usable /dev/kvm"
kvm_usable() {
  [ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
  # opening it is the real test (a missing module or a denied open shows here)
  ( exec 3<>/dev/kvm ) 2>/dev/null || return 1
  # kvm_pvm (PVM: nested virtualisation without hardware support) only runs
  # PVM-aware guest kernels; a stock kernel crawls, then dies with
  # "KVM internal error ... emulation failure".
  if [ -d /sys/module/kvm_pvm ]; then
    KVM_WHY="/dev/kvm is kvm_pvm (PVM), which cannot run a stock kernel"
    return 1
  fi
}

check_platform() {
  [ "$(uname -m)" = x86_64 ] || no_guest "the guest kernel is x86_64, this host is $(uname -m)"
  [ "$(uname -s)" = Linux ] || no_guest "a Linux host is needed"
}
