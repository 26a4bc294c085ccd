#!/bin/sh
# twinwire-conformance over the tls transport, with certificates made for
# this run (make-certs.sh):
#   run_conformance.sh RUNNER MAKE_CERTS INNER MODE [case filters]
# MODE: server (the client checks the server's certificate) or mutual
# (tls.verify = required: each end checks the other's).  TLS_RUNNER_OPTIONS:
# more runner options (the inner transport's keys).  Exits 77 (skip) when the
# inner transport's plugin is not on TWINWIRE_PLUGIN_PATH.
set -u
runner=$1 make_certs=$2 inner=$3 mode=$4
shift 4
# shellcheck source=tests/require-plugin.sh
. "$(dirname "$0")/../require-plugin.sh"
require_plugin "$inner"
if ! command -v openssl >/dev/null; then
    echo "SKIP: openssl (Debian's openssl package) is not installed: no certificates can be made"
    exit 77
fi
certs=$(mktemp -d "${TMPDIR:-/tmp}/tls-certs.XXXXXX") || exit 1
trap 'rm -rf "$certs"' EXIT
"$make_certs" "$certs" || exit 1
# The default: the server asks for no certificate, the client checks the server's.
verify=
[ "$mode" = mutual ] && verify="--set tls.verify=required"
# shellcheck disable=SC2086 # $verify and TLS_RUNNER_OPTIONS are lists of words
"$runner" ${TLS_RUNNER_OPTIONS:-} --wait-ms 30000 --set tls.inner="$inner" $verify \
    --set tls.cert_file="$certs/server.pem" --set tls.key_file="$certs/server.key" --set tls.ca_file="$certs/ca.pem" \
    tls "$@"
