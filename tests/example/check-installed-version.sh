#!/bin/sh
# What an installed tree says its version is, against meson's project
# version (the one place it is written): twinwire-info --version and its
# JSON, both pkg-config files, libtwinwire's file name, and the
# plugin_version of every plugin the build installs.
# usage: check-installed-version.sh BUILD SOURCE PREFIX LIBDIR BINDIR VERSION PLUGINS
#   PLUGINS: the plugins this build installs, comma-separated (pair,fault,rdma)
set -u
build=$1 src=$2 prefix=$3 libdir=$4 bindir=$5 version=$6 plugins=$7
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$src/tests/installed-tree.sh"

case $version in [0-9]*.[0-9]*.[0-9]*) ;; *) fail "'$version' is not a project version" ;; esac
install_tree "$build" "$prefix" "$libdir" "$bindir"
use_installed_pkgconfig "$prefix"

out=$("$bin/twinwire-info" --version 2>&1) || fail "twinwire-info --version exited non-zero: $out"
case $out in "twinwire-info $version (ABI "*")") ;; *) fail "twinwire-info --version says '$out', not $version" ;; esac
echo "ok: $out"

for pc in twinwire twinwire-plugin; do
    got=$(pkg-config --modversion $pc) || fail "pkg-config finds no $pc"
    [ "$got" = "$version" ] || fail "$pc.pc says version $got, not $version"
    echo "ok: $pc.pc: Version $got"
done

major=${version%%.*}
[ -f "$lib/libtwinwire.so.$version" ] || fail "no $lib/libtwinwire.so.$version"
soname=$(readelf -d "$lib/libtwinwire.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libtwinwire.so.$major" ] || fail "libtwinwire's soname is '$soname', not libtwinwire.so.$major"
echo "ok: libtwinwire.so.$version, soname $soname"

# Every installed plugin, as twinwire-info lists it (the version is what
# the plugin's entry point returns).
"$bin/twinwire-info" --plugin "$lib/twinwire" --transport tcp --json >"$work/info.json" 2>&1 ||
    { cat "$work/info.json"; fail "twinwire-info --json on the installed plugins"; }
python3 - "$work/info.json" "$version" "$plugins" <<'EOF' || { cat "$work/info.json"; fail "the versions above"; }
import json, sys
info = json.load(open(sys.argv[1]))
version, wanted = sys.argv[2], set(sys.argv[3].split(","))
ok = info["version"] == version
print(("ok" if ok else "FAIL") + ": twinwire-info --json: version " + info["version"])
found = {p["name"]: p for p in info["plugins"]}
for name in sorted(wanted):
    p = found.get(name)
    if p is None or not p["loads"]:
        print("FAIL: plugin %s is not installed or does not load: %s" % (name, p))
        ok = False
    elif p["version"] != version:
        print("FAIL: plugin %s says version %s" % (name, p["version"]))
        ok = False
    else:
        print("ok: plugin %s: version %s" % (name, p["version"]))
sys.exit(0 if ok else 1)
EOF
