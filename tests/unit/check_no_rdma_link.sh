#!/bin/sh
# The framework and every tool must start on a host without rdma-core, and
# the RDMA plugin must load there (it opens rdma-core itself at init): none
# of them may have a DT_NEEDED entry for libibverbs or librdmacm.  Nor for
# OpenSSL: only the tls plugin links libssl.
# usage: check_no_rdma_link.sh FILE...
set -eu
status=0
for f in "$@"; do
    if readelf -d "$f" | grep -E 'NEEDED.*(libibverbs|librdmacm)'; then
        echo "FAIL: $f links rdma-core"; status=1
    elif readelf -d "$f" | grep -E 'NEEDED.*(libssl|libcrypto)'; then
        echo "FAIL: $f links OpenSSL (only the tls plugin may)"; status=1
    else
        echo "ok: $f has no libibverbs/librdmacm/libssl dependency"
    fi
done
exit $status
