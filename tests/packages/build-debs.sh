#!/bin/bash
# build-debs.sh [--reuse] OUTDIR [SOURCE]: builds twinwire's Debian packages
# (docs/packaging.md) from the committed tree of SOURCE (default: the tree
# this script is in) and leaves the .deb, .changes and .buildinfo files in
# OUTDIR. SOURCE's HEAD is exported with git archive into a temporary
# directory (a copy without build directories when SOURCE is not a git
# checkout), since dpkg-buildpackage writes into the parent of the tree it
# builds. With --reuse, packages that OUTDIR already holds of the same commit
# are kept (OUTDIR/packaged-commit says which): the tests that need them
# (suites packages and deploy) build them once. Runs that share OUTDIR wait
# for each other. Exits 0 when built, 77 when this host cannot build them (not
# Debian, build dependencies missing: the reason is printed), 1 on failure.
set -u -o pipefail

reuse=0
[ "${1:-}" = --reuse ] && { reuse=1; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [--reuse] OUTDIR [SOURCE]" >&2; exit 1; }
outdir=$1
source=${2:-$(dirname "$(readlink -f "$0")")/../..}
source=$(readlink -f "$source")
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

command -v dpkg-buildpackage >/dev/null || skip "no dpkg-buildpackage: not a Debian system (apt-get install dpkg-dev)"
[ -f "$source/debian/control" ] || fail "$source has no debian/control"
mkdir -p "$outdir" || fail "cannot create $outdir"
outdir=$(readlink -f "$outdir")
exec 9>"$outdir/.lock"
flock 9

commit=$(git -C "$source" rev-parse -q --verify HEAD 2>/dev/null)
if [ $reuse = 1 ] && [ -n "$commit" ] && [ "$(cat "$outdir/packaged-commit" 2>/dev/null)" = "$commit" ] &&
    compgen -G "$outdir/*.changes" >/dev/null; then
    echo "reusing the packages of commit ${commit:0:7} in $outdir"
    exit 0
fi
rm -f "$outdir/packaged-commit"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/twinwire
mkdir "$tree"
if git -C "$source" rev-parse --verify -q HEAD >/dev/null 2>&1; then
    git -C "$source" archive --format=tar HEAD | tar -x -C "$tree" || fail "git archive HEAD of $source"
    echo "packaging commit $(git -C "$source" rev-parse --short HEAD) of $source"
    [ -z "$(git -C "$source" status --porcelain --untracked-files=no)" ] ||
        echo "note: $source has uncommitted changes; they are not in the packages"
else
    tar -C "$source" --exclude='./build*' --exclude='./_build*' --exclude=./.git -cf - . | tar -x -C "$tree" ||
        fail "copy of $source"
    echo "packaging the files of $source (not a git checkout)"
fi
[ -f "$tree/debian/rules" ] || fail "the exported tree has no debian/rules (is debian/ committed?)"

if ! unmet=$(cd "$tree" && dpkg-checkbuilddeps 2>&1); then
    echo "$unmet"
    skip "build dependencies missing: apt-get install them (tests/debian-packages.txt lists them)"
fi

log=$outdir/dpkg-buildpackage.log
echo "dpkg-buildpackage -us -uc -b (log: $log)"
if ! (cd "$tree" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
    tail -n 80 "$log"
    fail "dpkg-buildpackage (the whole log: $log)"
fi

shopt -s nullglob
built=("$work"/*.deb "$work"/*.changes "$work"/*.buildinfo)
[ ${#built[@]} -gt 0 ] || fail "dpkg-buildpackage left no package in $work"
rm -f "$outdir"/*.deb "$outdir"/*.changes "$outdir"/*.buildinfo
mv "${built[@]}" "$outdir"/ || fail "moving the packages to $outdir"
for f in "${built[@]}"; do echo "built: $outdir/${f##*/}"; done
# Only a git checkout's HEAD names what was packaged.
[ -n "$commit" ] && printf '%s\n' "$commit" >"$outdir/packaged-commit"
exit 0
