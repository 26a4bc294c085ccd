#!/bin/sh
# twinwire-conformance over the fault transport:
#   run_conformance.sh RUNNER INNER PROFILE [case filter]
# FAULT_RUNNER_OPTIONS: more runner options (--address, --source, ...).
# Exits 77 (skip) when the inner transport's plugin is not on the plugin path.
set -u
runner=$1 inner=$2 profile=$3
shift 3
if [ "$inner" != tcp ]; then
    found=
    oldifs=$IFS IFS=:
    for dir in ${TWINWIRE_PLUGIN_PATH:-}; do
        [ -f "$dir/twinwire-$inner-abi1.so" ] && found=$dir/twinwire-$inner-abi1.so
    done
    IFS=$oldifs
    if [ -z "$found" ]; then
        echo "SKIP: the $inner plugin (twinwire-$inner-abi1.so) is not on TWINWIRE_PLUGIN_PATH=${TWINWIRE_PLUGIN_PATH:-}"
        exit 77
    fi
fi
# A fixed seed: a failure here is repeated with the same command.
# shellcheck disable=SC2086 # FAULT_RUNNER_OPTIONS is a list of words
exec "$runner" ${FAULT_RUNNER_OPTIONS:-} --wait-ms 30000 --set fault.inner="$inner" --set fault.profile="$profile" --set fault.seed=1 \
    fault "$@"
