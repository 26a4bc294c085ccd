# The guest's only network: a veth pair with a SoftRoCE device on each end
# (run by stage2.sh with bash -e; $MTU and $TOPOLOGY come from the config).
#
#   rxe0 -- sr0 10.77.0.1/24 == veth == sr1 10.77.0.2/24 -- rxe1
#
# topology "loopback" creates rxe0 only (client and server share 10.77.0.1).

ip link set lo up
ip link add sr0 mtu "$MTU" type veth peer name sr1 mtu "$MTU"
ip addr add 10.77.0.1/24 dev sr0
ip addr add 10.77.0.2/24 dev sr1
ip link set sr0 up
ip link set sr1 up
rdma link add rxe0 type rxe netdev sr0
[ "$TOPOLOGY" = wire ] || exit 0
rdma link add rxe1 type rxe netdev sr1

# Both ends live in one network namespace: rdma_rxe (Linux 6.1) has a single
# UDP socket, in the initial namespace, so a peer namespace receives nothing.
# Policy routing makes 10.77.0.1 <-> 10.77.0.2 cross the veth pair instead of
# the loopback; arriving packets are still delivered locally.
for c in all sr0 sr1; do sysctl -qw net.ipv4.conf.$c.rp_filter=0; done
sysctl -qw net.ipv4.conf.sr0.accept_local=1 net.ipv4.conf.sr1.accept_local=1
sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
ip rule add pref 100 lookup local
ip rule del pref 0
ip route add 10.77.0.2/32 dev sr0 table 101
ip route add 10.77.0.1/32 dev sr1 table 102
ip rule add pref 10 iif lo from 10.77.0.1 to 10.77.0.2 lookup 101
ip rule add pref 11 iif lo from 10.77.0.2 to 10.77.0.1 lookup 102
