#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In a 6.12 guest: the kernel's own driver tests, drivers/net/ping.py (IPv4,
# IPv6 and TCP through socat), queues.py and stats.py from linux-source-6.12
# (make ksft), against vrss0 as the device under test, as
# tools/testing/selftests/drivers/net/README.rst describes: NETIF=vrss0 on
# a veth lower with the far end in a network namespace (REMOTE_TYPE=netns),
# or, under tools/vm/run --nic, on the virtio-net NIC with the far end the
# host (REMOTE_TYPE=vmhost, tools/vm/remote_vmhost.py).  Every case must
# pass or be an XFAIL the kernel's test declares itself (pause, FEC): a
# failure or a skip fails this.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
source "$repo/selftests/drivers/net/vrss/lib.sh"
vrss_require_root
vrss_require_module
out=$(mktemp)
cleanup() {
	rm -f "$out"
	vrss_net_cleanup
	vrss_unload 2> /dev/null
}
trap cleanup EXIT

vrss_load || { echo "not ok: insmod vrss.ko"; exit 1; }
if [ -n "${VRSS_NIC:-}" ]; then
	# tools/vm/run --nic: vrss0 on the virtio-net NIC, the far end the
	# host's namespace behind it (tools/vm/remote_vmhost.py).  IPv6 on
	# vrss0 even if a test before this one in the boot turned it off.
	ip addr flush dev "$VRSS_NIC" &&
		ip link set "$VRSS_NIC" up &&
		ip link add link "$VRSS_NIC" name vrss0 type vrss &&
		sysctl -qw net.ipv6.conf.vrss0.accept_dad=0 \
			net.ipv6.conf.vrss0.disable_ipv6=0 &&
		ip link set vrss0 up &&
		ip addr add 198.51.100.1/24 dev vrss0 &&
		ip addr add 2001:db8::1/64 dev vrss0 nodad ||
		{ echo "not ok: vrss0 on $VRSS_NIC could not be set up"; exit 1; }
	export LOCAL_V4=198.51.100.1 REMOTE_V4=198.51.100.2
	export LOCAL_V6=2001:db8::1 REMOTE_V6=2001:db8::2
	export REMOTE_TYPE=vmhost REMOTE_ARGS=host
else
	vrss_net_setup || { echo "not ok: vrss0 on veth0 could not be set up"; exit 1; }
	# IPv6 on the test link only (vrss_net_setup turns it off elsewhere).
	sysctl -qw net.ipv6.conf.vrss0.accept_dad=0 net.ipv6.conf.vrss0.disable_ipv6=0
	ip netns exec $VRSS_PEER sysctl -qw net.ipv6.conf.veth1.accept_dad=0 \
		net.ipv6.conf.veth1.disable_ipv6=0
	ip addr add 2001:db8:1::2/64 dev vrss0 nodad
	ip -n $VRSS_PEER addr add 2001:db8:1::1/64 dev veth1 nodad
	export LOCAL_V4=$VRSS_IP REMOTE_V4=$VRSS_PEER_IP
	export LOCAL_V6=2001:db8:1::2 REMOTE_V6=2001:db8:1::1
	export REMOTE_TYPE=netns REMOTE_ARGS=$VRSS_PEER
fi
export NETIF=vrss0
# The tests read YNL specs (ethtool.yaml, netdev.yaml) with PyYAML's pure
# Python loader, slow in a TCG guest: pyfast/sitecustomize.py gives them
# libyaml's.
export PYTHONPATH=$repo/tools/scripts/pyfast${PYTHONPATH:+:$PYTHONPATH}
make -s -C "$repo/build/ksft/tools/testing/selftests" TARGETS=drivers/net \
	TEST_PROGS="ping.py queues.py stats.py" run_tests 2>&1 | tee "$out"
! grep -Eq '^(# )*not ok |# SKIP' "$out" && grep -q '^ok ' "$out"
