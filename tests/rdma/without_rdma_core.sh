#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run the RDMA plugin's host cases once with each rdma-core library hidden
# (tests/hide-library.sh), as on a host that lacks it.
#   without_rdma_core.sh PLUGIN_HOST_TESTS
# Exit 77 when no private mount namespace can be made here.
set -u
. "$(dirname "$0")/../hide-library.sh"
if ! in_private_mount_namespace "$0" "$@"; then
    echo "SKIP: cannot make a private mount namespace here (unshare -m and unshare -r -m both failed)"
    exit 77
fi
empty=$(mktemp "${TMPDIR:-/tmp}/empty-library.XXXXXX")
trap 'rm -f "$empty"' EXIT
status=0
for soname in libibverbs.so.1 librdmacm.so.1; do
    hidden=$(hide_library "$soname" "$empty") || { echo "FAIL: cannot hide $soname"; exit 1; }
    echo "== $soname hidden ($hidden)"
    TW_TEST_HIDDEN_SONAME=$soname "$1" '~[with-rdma-core]' || status=1
    unhide_library "$soname"
done
exit $status
