# shellcheck shell=bash
# Working in the clean root: entering it, and installing the project's
# packages into it with its own apt (the user's `apt-get install ./x.deb`),
# which fetches their dependencies from the Debian archive. Sourced after
# common.sh and clean-root.sh.

# Runs a command in ROOT with /proc, /dev and /sys of the caller, in a
# private mount and PID namespace: the mounts vanish with it, and so does
# every process it started. The environment is a fresh login's, not the
# test's (Meson's TWINWIRE_PLUGIN_PATH would point the daemon at the build
# tree's plugins).
in_root() { # root command...
    local root=$1
    shift
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
        unshare --mount --pid --fork --kill-child /bin/sh -c '
        root=$1; shift
        mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" &&
            mount --rbind /sys "$root/sys" || exit 125
        exec chroot "$root" "$@"' in_root "$root" "$@"
}

# The root as a fresh host has it, with the packages of DEBS copied to
# /debs inside it. Checks that it has no rdma-core.
prepare_root() { # root debs-dir
    local root=$1 debs=$2
    unpack_clean_root "$root"
    mkdir -p "$root/debs" && cp "$debs"/*.deb "$root/debs/" || die "cannot copy the packages into $root/debs"
    # A chroot starts no services (policy-rc.d, Debian's rule for chroots)
    # and resolves names as the host does.
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod 755 "$root/usr/sbin/policy-rc.d"
    cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
    no_rdma_core "$root" "the clean root"
}

# ROOT has neither rdma-core's packages nor its libraries.
no_rdma_core() { # root what
    local p libs
    for p in libibverbs1 librdmacm1 ibverbs-providers rdma-core; do
        if in_root "$1" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            fail "$2 has $p installed"
            return
        fi
    done
    libs=$(find "$1/usr/lib" "$1/lib" -name 'libibverbs.so*' -o -name 'librdmacm.so*' 2>/dev/null)
    [ -z "$libs" ] || { fail "$2 has rdma-core's libraries: $libs"; return; }
    ok "$2 has no rdma-core (no libibverbs1, librdmacm1, ibverbs-providers, no libibverbs.so or librdmacm.so)"
}

# apt-get in ROOT, quietly, with its log kept in ROOT/apt.log.
root_apt() { # root apt-get-args...
    local root=$1
    shift
    in_root "$root" apt-get -q -y -o Dpkg::Use-Pty=0 "$@" >>"$root/apt.log" 2>&1
}

# Installs the named packages of /debs, with their dependencies from the archive.
install_debs() { # root package...
    local root=$1 p f files=()
    shift
    for p in "$@"; do
        f=$(cd "$root/debs" && compgen -G "${p}_*.deb" | head -n1)
        [ -n "$f" ] || die "no ${p}_*.deb among the packages"
        files+=("/debs/$f")
    done
    root_apt "$root" update || skip "apt-get update in the clean root failed (is the Debian archive reachable?): $(tail -n 5 "$root/apt.log")"
    root_apt "$root" install --no-install-recommends "${files[@]}" ||
        die "apt-get install ${files[*]} in the clean root failed: $(tail -n 20 "$root/apt.log")"
    ok "apt-get install ${files[*]} in the clean root"
}
