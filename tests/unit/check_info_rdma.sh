#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# twinwire-info with the real RDMA plugin, as an RDMA user reads it beside
# ibv_devinfo and `ip address`: on a kernel without ib_uverbs (this host) it
# says so instead of "no device"; where there are devices (the SoftRoCE
# guest) each port has its link speed and width and its netdev with
# addresses, each RoCE GID its netdev.  The text and the JSON agree; the
# JSON parses.  TAP output.
#
#   check_info_rdma.sh TWINWIRE_INFO PLUGIN_DIR
set -u
INFO=$1 PLUGIN_DIR=$2
. "$(dirname "$0")/../kvd/tap.sh"
NL=$'\n'
text=$("$INFO" --plugin "$PLUGIN_DIR" 2>&1)
json=$("$INFO" --plugin "$PLUGIN_DIR" --json 2>&1)
if python3 -c 'import json, sys; json.load(sys.stdin)' <<<"$json" 2>/dev/null; then
    ok "--json prints one JSON document"
else
    not_ok "--json prints one JSON document" "$json"
fi
probe=$(python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)["searches"][0]["probe"]))' <<<"$json" 2>&1)

if [ ! -e /sys/class/infiniband_verbs ]; then
    has "without ib_uverbs the probe says the kernel has no RDMA support, with the fix" "$text" \
        "error: this kernel has no RDMA support \\(ib_uverbs\\)[^$NL]*modprobe ib_uverbs"
    has "and the reason for falling back says it too" "$text" \
        $'\nreason: RDMA plugin refused: this kernel has no RDMA support \\(ib_uverbs\\)'
    has "the JSON probe says it" "$probe" 'error: this kernel has no RDMA support \(ib_uverbs\)'
    finish
fi
if [ -z "${SOFTROCE_NETDEV:-}" ]; then
    ok "port and GID lines # SKIP this kernel has ib_uverbs but this is not the SoftRoCE guest: devices unknown"
    finish
fi
has "each port names its link speed and width, and its netdev with its address" "$text" \
    "port: ${SOFTROCE_DEV}/1 state ACTIVE [^$NL]* speed [0-9.]+ Gb/s \([A-Z0-9]+\) width [0-9]+X [^$NL]*netdev ${SOFTROCE_NETDEV} ${SOFTROCE_IP//./\\.}/24"
has "each RoCE v2 GID names its netdev" "$text" \
    "gid: ${SOFTROCE_DEV}/1\[${SOFTROCE_GID_INDEX}\] ::ffff:${SOFTROCE_IP//./\\.} RoCEv2 netdev ${SOFTROCE_NETDEV}"
has "the JSON probe holds the same port line" "$probe" "port: ${SOFTROCE_DEV}/1 [^$NL]*netdev ${SOFTROCE_NETDEV} "
has "auto chooses RDMA here" "$text" $'\ntransport: rdma\n'
finish
