#!/bin/sh
# In the SoftRoCE guest (its kernel loads the tls module): the tls transport
# over inner tcp, its sessions on the socket.  The session tests check that
# a TLS 1.2 session's records are sealed and opened by the kernel
# (TLS_EXPECT_KTLS makes a guest without the ULP fail, not pass unchecked);
# a TLS 1.3 session on the socket follows a peer's KeyUpdate; and the
# conformance suite passes over such sessions (TLS 1.3, and TLS 1.2 in the
# kernel), with and without mutual TLS.
#   kernel_tls_guest.sh RUNNER MAKE_CERTS SESSION_TESTS KEY_UPDATE_TESTS TWINWIRE_INFO
set -u
runner=$1 make_certs=$2 session_tests=$3 key_update_tests=$4 info=$5
here=$(dirname "$0")
status=0
echo "tcp_available_ulp: $(cat /proc/sys/net/ipv4/tcp_available_ulp)"
# twinwire-info says the kernel takes TLS 1.2 records here.
line=$(TWINWIRE_TRANSPORT=tls "$info" 2>&1 | grep '^  ktls: ' | tail -1)
echo "twinwire-info:$line"
case $line in
    *"ktls: in use for TLS 1.2: 0 sessions on the socket"*) ;;
    *) echo "FAIL: twinwire-info --transport tls does not say kTLS is in use"; status=1 ;;
esac
TLS_EXPECT_KTLS=1 "$here/run_with_certs.sh" "$make_certs" "$session_tests" || status=1
"$here/run_with_certs.sh" "$make_certs" "$key_update_tests" || status=1
for mode in server mutual; do
    "$here/run_conformance.sh" "$runner" "$make_certs" tcp "$mode" || status=1
done
TLS_RUNNER_OPTIONS="--set tls.max_protocol=1.2" "$here/run_conformance.sh" "$runner" "$make_certs" tcp server || status=1
exit $status
