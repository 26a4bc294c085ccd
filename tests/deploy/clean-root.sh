# shellcheck shell=bash
# A clean Debian 12 root, as a user's fresh host has it: built once with
# mmdebstrap (variant apt: the Essential packages and apt, so no rdma-core)
# from the Debian archive the host's apt uses, then kept as a tarball in
# $DEPLOY_CACHE, as tools/softroce keeps the guest's kernel. Each test
# unpacks its own copy. Sourced; needs fail() and skip().

DEPLOY_CACHE=${TWINWIRE_DEPLOY_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/twinwire-deploy}
DEPLOY_SUITE=bookworm
# Bump when the way the root is built changes.
DEPLOY_ROOT_BUILDER=1

# The host's own archive entries, so that a host with a local mirror uses it.
deploy_sources() {
    local f=/etc/apt/sources.list.d/debian.sources
    [ -r "$f" ] && grep -q "^Suites:.*\b$DEPLOY_SUITE\b" "$f" && printf '%s\n' "$f"
}

deploy_root_stamp() {
    { echo "builder $DEPLOY_ROOT_BUILDER suite $DEPLOY_SUITE"; s=$(deploy_sources) && cat "$s"; } |
        sha256sum | cut -c1-16
}

# Prints the cached tarball, building it first when missing or stale.
# Concurrent first runs wait for each other. (mmdebstrap writes a tarball
# because the name ends in .tar.)
clean_root_tarball() {
    local tar=$DEPLOY_CACHE/$DEPLOY_SUITE-apt.tar new=$DEPLOY_CACHE/.new-$DEPLOY_SUITE-apt.tar stamp
    stamp=$(deploy_root_stamp)
    command -v mmdebstrap >/dev/null || skip "no mmdebstrap (apt-get install mmdebstrap)"
    [ "$(id -u)" = 0 ] || skip "building and entering a Debian root needs root"
    mkdir -p "$DEPLOY_CACHE" || fail "cannot create $DEPLOY_CACHE"
    exec 9>"$DEPLOY_CACHE/.lock"
    flock 9
    if [ ! -f "$tar" ] || [ "$(cat "$tar.stamp" 2>/dev/null)" != "$stamp" ]; then
        echo "building the clean Debian $DEPLOY_SUITE root once (mmdebstrap --variant=apt): $tar" >&2
        local sources=() log=$DEPLOY_CACHE/mmdebstrap.log
        s=$(deploy_sources) && sources=("$s")
        if ! mmdebstrap --variant=apt --mode=root "$DEPLOY_SUITE" "$new" "${sources[@]}" >"$log" 2>&1; then
            tail -n 20 "$log" >&2
            rm -f "$new"
            flock -u 9
            skip "mmdebstrap could not build a $DEPLOY_SUITE root (is the Debian archive reachable? log: $log)"
        fi
        mv "$new" "$tar"
        printf '%s\n' "$stamp" >"$tar.stamp"
    fi
    flock -u 9
    exec 9>&-
    printf '%s\n' "$tar"
}

# Unpacks a fresh copy of the clean root into DIR.
unpack_clean_root() { # dir
    local tar
    tar=$(clean_root_tarball) || exit $?
    rm -rf "$1" && mkdir -p "$1" || fail "cannot create $1"
    tar -C "$1" -xpf "$tar" || fail "cannot unpack $tar into $1"
}
