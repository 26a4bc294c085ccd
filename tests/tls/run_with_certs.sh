#!/bin/sh
# run_with_certs.sh MAKE_CERTS PROGRAM [ARGS...]: PROGRAM with TLS_TEST_CERTS
# naming a directory of certificates made for this run (make-certs.sh).
set -u
make_certs=$1
shift
if ! command -v openssl >/dev/null; then
    echo "SKIP: openssl (Debian's openssl package) is not installed: no certificates can be made"
    exit 77
fi
TLS_TEST_CERTS=$(mktemp -d "${TMPDIR:-/tmp}/tls-certs.XXXXXX") || exit 1
export TLS_TEST_CERTS
trap 'rm -rf "$TLS_TEST_CERTS"' EXIT
"$make_certs" "$TLS_TEST_CERTS" || exit 1
"$@"
