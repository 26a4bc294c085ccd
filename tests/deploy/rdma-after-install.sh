#!/bin/bash
# RDMA comes with one package, no rebuild (docs/deploying.md): the clean
# Debian 12 root of tcp-without-rdma.sh, with libtwinwire1 and twinwire-kvd
# installed, goes into the SoftRoCE guest; there the daemon first serves
# TCP and says why; then apt-get installs twinwire-transport-rdma (with
# libibverbs1, librdmacm1 and, recommended, ibverbs-providers), and the same
# daemon, started again with the same configuration, serves an RDMA client.
# The guest has no network: apt downloads the RDMA packages here, into the
# root's own package cache, and installs them there offline.
#
#   rdma-after-install.sh DEBS_DIR WORK_DIR SOURCE_DIR SOFTROCE_RUNNER KVD_PROBE
set -u -o pipefail
debs=$1 work=$2 src=$3 runner=$4 probe=$5
here=$(dirname "$(readlink -f "$0")")
. "$here/common.sh"
. "$here/clean-root.sh"
. "$here/root.sh"

[ -x "$probe" ] || skip "kvd-probe, the RDMA client, is not built (meson -Dtools=enabled -Dtests=true)"
"$src/tests/packages/build-debs.sh" --reuse "$debs" "$src"
case $? in 0) ;; 77) skip "the packages cannot be built here" ;; *) die "tests/packages/build-debs.sh failed" ;; esac

# The guest shares the build tree: the root must lie inside it.
root=$work/rdma-root
prepare_root "$root" "$debs"
trap 'rm -rf "$root"' EXIT
install_debs "$root" libtwinwire1 twinwire-kvd
rdma_deb=$(cd "$root/debs" && compgen -G 'twinwire-transport-rdma_*.deb' | head -n1)
[ -n "$rdma_deb" ] || die "no twinwire-transport-rdma package among the packages"
root_apt "$root" install --download-only "/debs/$rdma_deb" ||
    die "apt-get install --download-only of the RDMA packages failed: $(tail -n 20 "$root/apt.log")"
ok "apt downloaded twinwire-transport-rdma and its dependencies: $(cd "$root/var/cache/apt/archives" && ls -- *.deb | sed 's/_.*//' | tr '\n' ' ')"
no_rdma_core "$root" "the root before the RDMA package is installed"

echo "# into the SoftRoCE guest"
"$runner" -- "$here/guest-rdma-after-install.sh" "$root" "/debs/$rdma_deb" "$probe"
st=$?
case $st in
0) ;;
77) skip "no SoftRoCE guest here (above: why)" ;;
*) fail "the guest half failed (exit status $st)" ;;
esac
finish
