# shellcheck shell=bash
# The guest's only network: a veth pair with a SoftRoCE device on each end
# (run by stage2.sh with bash -e; $MTU and $TOPOLOGY come from the config).
#
#   rxe0 -- sr0 10.77.0.1/24 == veth == sr1 10.77.0.2/24 -- rxe1
#
# topology "loopback" creates rxe0 only (client and server share 10.77.0.1).
# Every process costs under TCG: ip and rdma run in batch mode, sysctls are
# plain writes.

ip -batch - <<EOF
link set lo up
link add sr0 mtu $MTU type veth peer name sr1 mtu $MTU
addr add 10.77.0.1/24 dev sr0
addr add 10.77.0.2/24 dev sr1
link set sr0 up
link set sr1 up
EOF
if [ "$TOPOLOGY" != wire ]; then
  rdma link add rxe0 type rxe netdev sr0
  exit 0
fi
rdma -b - <<EOF
link add rxe0 type rxe netdev sr0
link add rxe1 type rxe netdev sr1
EOF

# Both ends live in one network namespace: rdma_rxe (Linux 6.1) has a single
# UDP socket, in the initial namespace, so a peer namespace receives nothing.
# Policy routing makes 10.77.0.1 <-> 10.77.0.2 cross the veth pair instead of
# the loopback; arriving packets are still delivered locally.
conf=/proc/sys/net/ipv4/conf
for c in all sr0 sr1; do echo 0 >$conf/$c/rp_filter; done
for c in sr0 sr1; do echo 1 >$conf/$c/accept_local; done
echo 1 >$conf/all/arp_ignore
echo 2 >$conf/all/arp_announce
ip -batch - <<EOF
rule add pref 100 lookup local
rule del pref 0
route add 10.77.0.2/32 dev sr0 table 101
route add 10.77.0.1/32 dev sr1 table 102
rule add pref 10 iif lo from 10.77.0.1 to 10.77.0.2 lookup 101
rule add pref 11 iif lo from 10.77.0.2 to 10.77.0.1 lookup 102
EOF
