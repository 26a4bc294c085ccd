#!/bin/sh
# The installed twinwire-softroce-run, host only (TAP, a few seconds; the
# example's test boots it once): it runs from an installed tree, its --help
# has every section of a manual page, and, run as a test, it never installs
# packages behind the user's back: a missing one is a skip that names it and
# the apt-get line, and apt-get runs only when asked (--install-packages).
# dpkg-query and apt-get are stand-ins on the PATH, so nothing is installed.
# usage: check-installed-runner.sh BUILD SOURCE PREFIX LIBDIR BINDIR
set -u
build=$1 src=$2 prefix=$3 libdir=$4 bindir=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "Bail out! $*"; exit 1; }
. "$src/tests/installed-tree.sh"
install_tree "$build" "$prefix" "$libdir" "$bindir"
runner=$bin/twinwire-softroce-run
[ -x "$runner" ] || fail "twinwire-softroce-run is not installed in $bin"

n=0 failed=0
check() { # description, then a test command
    what=$1
    shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $what"; else echo "not ok $n - $what"; failed=1; sed 's/^/# /' "$work/out"; fi
}

echo "1..6"
"$runner" --help >"$work/out" 2>&1
sections_present() {
    for s in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT 'EXIT STATUS' FILES EXAMPLES; do
        grep -qx "$s" "$work/out" || return 1
    done
}
check "--help has NAME, SYNOPSIS, DESCRIPTION, OPTIONS, ENVIRONMENT, EXIT STATUS, FILES, EXAMPLES" sections_present
check "--help names the installed command and the installed files" \
    eval 'grep -q "twinwire-softroce-run - run a command" "$work/out" && grep -q "$(dirname "$(readlink -f "$runner")"): this command" "$work/out"'

# Stand-ins: every package looks missing; apt-get only leaves a trace.
mkdir "$work/fake" "$work/outside"
printf '#!/bin/sh\nexit 1\n' >"$work/fake/dpkg-query"
printf '#!/bin/sh\necho "$*" >>"%s/apt-get-called"\n' "$work" >"$work/fake/apt-get"
chmod +x "$work/fake/dpkg-query" "$work/fake/apt-get"
cd "$work/outside" || exit 1
PATH=$work/fake:$PATH "$runner" -- true >"$work/out" 2>&1
rc=$?
check "run as a test with packages missing, it skips (77, got $rc) naming them and the apt-get line" \
    eval '[ $rc = 77 ] && grep -q "SKIP: .*apt-get install -y --no-install-recommends .*qemu-system-x86" "$work/out"'
check "and installs nothing" test ! -e "$work/apt-get-called"
PATH=$work/fake:$PATH "$runner" --check >"$work/out" 2>&1
rc=$?
check "--check says the same (77, got $rc) and installs nothing" \
    eval '[ $rc = 77 ] && grep -q "apt-get install -y --no-install-recommends" "$work/out" && [ ! -e "$work/apt-get-called" ]'
PATH=$work/fake:$PATH SOFTROCE_RUN_QEMU=$work/no-qemu "$runner" --install-packages -- true >"$work/out" 2>&1
check "--install-packages runs apt-get install for the packages marked guest" \
    eval 'grep -q "install .*qemu-system-x86" "$work/apt-get-called" 2>/dev/null'
exit $failed
