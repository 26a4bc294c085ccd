#!/bin/bash
# The Debian packages as a distribution would take them: build-debs.sh builds
# them from the committed tree; lintian --pedantic shows no error and no
# warning (overrides in debian/*lintian-overrides each say why); only
# twinwire-transport-rdma asks for rdma-core, and it Depends on libibverbs1
# and librdmacm1 and Recommends ibverbs-providers; only
# twinwire-transport-tls asks for libssl; libtwinwire1 holds the library
# alone.
# usage: check-debs.sh WORK_DIR SOURCE VERSION
set -u -o pipefail
work=$1 src=$2 version=$3
fail() { echo "FAIL: $*"; failed=1; }
failed=0

# The package version follows the project's (meson.build).
changelog_version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version 2>/dev/null) ||
    { echo "SKIP: no dpkg-parsechangelog: not a Debian system"; exit 77; }
[ "${changelog_version%-*}" = "$version" ] ||
    { echo "FAIL: debian/changelog is at $changelog_version, the project at $version"; exit 1; }

# CI installs tests/debian-packages.txt: every build dependency must be there,
# or CI would skip this test instead of running it.
listed=$(awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$src/tests/debian-packages.txt")
build_deps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$src/debian/control" | sed '$d' |
    sed 's/^Build-Depends://; s/([^)]*)//g; s/,/\n/g' | awk 'NF { print $1 }')
for dep in $build_deps; do
    [ "$dep" = debhelper-compat ] && dep=debhelper
    grep -qx "$dep" <<<"$listed" || fail "build dependency $dep is not in tests/debian-packages.txt"
done
[ $failed = 0 ] || exit 1

# Each lintian override says why, in a comment right above it.
for f in "$src"/debian/*lintian-overrides "$src"/debian/source/lintian-overrides; do
    [ -f "$f" ] || continue
    awk -v f="${f#"$src"/}" '/^[[:space:]]*$/ { prev = ""; next }
        !/^#/ && prev !~ /^#/ { print "FAIL: " f ": override without a reason above it: " $0; bad = 1 }
        { prev = $0 } END { exit bad }' "$f" || failed=1
done

# The deploy suite installs the same packages: whichever test comes first
# builds them.
out=$work/debs
start=$SECONDS
"$src/tests/packages/build-debs.sh" --reuse "$out" "$src"
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { echo "FAIL: build-debs.sh exited $rc"; exit 1; }
echo "ok: packages ready in $((SECONDS - start)) s"

deb() { # package: its .deb, or nothing
    compgen -G "$out/${1}_*.deb" | head -n1
}
relations() { # package field...: those fields of its control, one relation a line
    local f field
    f=$(deb "$1")
    [ -n "$f" ] || return 0
    shift
    for field in "$@"; do dpkg-deb -f "$f" "$field"; done | tr ',' '\n' | sed 's/^ *//'
}

# Every binary package of debian/control was built.
for p in $(sed -n 's/^Package: //p' "$src/debian/control"); do
    if [ -n "$(deb "$p")" ]; then echo "ok: $p built"; else fail "no package $p was built"; fi
done

# Only twinwire-transport-rdma asks for rdma-core (Depends, Pre-Depends or
# Recommends: apt installs all three).
for f in "$out"/*.deb; do
    p=$(dpkg-deb -f "$f" Package)
    # The plugin and its debug symbols.
    case $p in twinwire-transport-rdma | twinwire-transport-rdma-dbgsym) continue ;; esac
    rdma=$(relations "$p" Pre-Depends Depends Recommends | grep -E '^(libibverbs|librdmacm|ibverbs-providers|rdma-core|twinwire-transport-rdma)')
    [ -z "$rdma" ] || fail "$p asks for $(echo $rdma)"
done
[ $failed = 0 ] && echo "ok: no package but twinwire-transport-rdma depends on or recommends rdma-core"
rdma_depends=$(relations twinwire-transport-rdma Depends)
for d in libibverbs1 librdmacm1; do
    grep -qE "^$d( |$)" <<<"$rdma_depends" || fail "twinwire-transport-rdma does not Depend on $d: $(echo $rdma_depends)"
done
relations twinwire-transport-rdma Recommends | grep -qE '^ibverbs-providers( |$)' ||
    fail "twinwire-transport-rdma does not Recommend ibverbs-providers"

# Only twinwire-transport-tls needs libssl, and it does (linked, so through
# its shlibs).
for f in "$out"/*.deb; do
    p=$(dpkg-deb -f "$f" Package)
    case $p in twinwire-transport-tls | twinwire-transport-tls-dbgsym) continue ;; esac
    ssl=$(relations "$p" Pre-Depends Depends Recommends | grep -E '^(libssl|openssl|twinwire-transport-tls)')
    [ -z "$ssl" ] || fail "$p asks for $(echo $ssl)"
done
relations twinwire-transport-tls Depends | grep -qE '^libssl3( |$)' ||
    fail "twinwire-transport-tls does not Depend on libssl3: $(echo $(relations twinwire-transport-tls Depends))"
[ $failed = 0 ] && echo "ok: only twinwire-transport-tls asks for libssl, and it Depends on libssl3"

# libtwinwire1 holds libtwinwire.so.1* and its documentation alone.
lib_deb=$(deb libtwinwire1)
[ -z "$lib_deb" ] || {
    others=$(dpkg-deb --fsys-tarfile "$lib_deb" | tar -t | grep -v '/$' |
        grep -Ev '^\./usr/lib/[^/]+/libtwinwire\.so\.1(\.|$)|^\./usr/share/(doc|lintian)/')
    [ -z "$others" ] || fail "libtwinwire1 holds more than the library: $others"
}

# lintian --pedantic on the .changes: no E: and no W: line.
lintian_out=$(lintian --pedantic --fail-on none "$out"/*.changes 2>&1)
echo "lintian --pedantic:"
echo "$lintian_out"
if grep -Eq '^[EW]: ' <<<"$lintian_out"; then
    fail "lintian --pedantic: $(grep -Ec '^E: ' <<<"$lintian_out") errors, $(grep -Ec '^W: ' <<<"$lintian_out") warnings"
else
    echo "ok: lintian --pedantic shows no error and no warning"
fi
exit $failed
