# shellcheck shell=sh
# Sourced by the tests that use twinwire as a stranger does, from an
# installed tree: install_tree installs the build into $work/root with
# `meson install --destdir` and sets dest, lib and bin to its
# directories; use_installed_pkgconfig makes pkg-config find that tree's
# twinwire.pc (a copy whose prefix is where the tree lies). Needs $work and
# fail().
install_tree() { # build prefix libdir bindir
    dest=$work/root
    meson install -C "$1" --no-rebuild --quiet --destdir "$dest" >"$work/install.log" 2>&1 ||
        { cat "$work/install.log"; fail "meson install --destdir"; }
    case $3 in /*) lib=$dest$3 ;; *) lib=$dest$2/$3 ;; esac
    case $4 in /*) bin=$dest$4 ;; *) bin=$dest$2/$4 ;; esac
}

use_installed_pkgconfig() { # prefix
    mkdir -p "$work/pkgconfig"
    for pc in "$lib"/pkgconfig/*.pc; do
        sed "s|^prefix=.*|prefix=$dest$1|" "$pc" >"$work/pkgconfig/${pc##*/}"
    done
    export PKG_CONFIG_PATH="$work/pkgconfig" LD_LIBRARY_PATH="$lib"
}
