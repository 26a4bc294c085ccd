#!/bin/sh
# twinwire-conformance over the fault transport:
#   run_conformance.sh RUNNER INNER PROFILE [case filter]
# FAULT_RUNNER_OPTIONS: more runner options (--address, --source, ...).
# Exits 77 (skip) when the inner transport's plugin is not on the plugin path.
set -u
runner=$1 inner=$2 profile=$3
shift 3
# shellcheck source=tests/require-plugin.sh
. "$(dirname "$0")/../require-plugin.sh"
require_plugin "$inner"
# A fixed seed: a failure here is repeated with the same command.
# shellcheck disable=SC2086 # FAULT_RUNNER_OPTIONS is a list of words
exec "$runner" ${FAULT_RUNNER_OPTIONS:-} --wait-ms 30000 --set fault.inner="$inner" --set fault.profile="$profile" --set fault.seed=1 \
    fault "$@"
