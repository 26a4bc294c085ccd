# Sourced by test scripts (POSIX sh): require_plugin NAME exits 77 (Meson's
# SKIP), saying why, unless the plugin file of NAME is in a directory of
# TWINWIRE_PLUGIN_PATH. tcp is built in and always there.
require_plugin() {
    [ "$1" = tcp ] && return 0
    _found=
    _oldifs=$IFS IFS=:
    for _dir in ${TWINWIRE_PLUGIN_PATH:-}; do
        [ -f "$_dir/twinwire-$1-abi1.so" ] && _found=$_dir
    done
    IFS=$_oldifs
    [ -n "$_found" ] && return 0
    echo "SKIP: the $1 plugin (twinwire-$1-abi1.so) is not on TWINWIRE_PLUGIN_PATH=${TWINWIRE_PLUGIN_PATH:-}"
    exit 77
}
