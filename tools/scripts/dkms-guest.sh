#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In a guest (dkms-check.sh): each ROOT holds lib/modules/$(uname -r) as
# DKMS or make install left it.  What an admin does next: modprobe vrss
# (with a parameter, as /etc/modprobe.d would give), create vrss0, switch
# rxhash on; and check it is that installed module doing it.
#
#   dkms-guest.sh [--ktap NAME] ROOT...
#
# --ktap: the result as a KTAP case NAME, the output as its diagnostics
# (make check runs it so in a boot of its selftests).
set -eu
if [ "${1:-}" = --ktap ]; then
	name=$2
	shift 2
	echo "TAP version 13"
	echo "1..1"
	if out=$("$0" "$@" 2>&1); then rc=0; else rc=1; fi
	printf '%s\n' "$out" | sed 's/^/# /'
	[ $rc = 0 ] && echo "ok 1 $name" || echo "not ok 1 $name"
	exit $rc
fi
source "$(dirname "$0")/../../selftests/drivers/net/vrss/lib.sh"
trap 'vrss_net_cleanup || true; rmmod vrss 2> /dev/null || true' EXIT
for root in "$@"; do
	modprobe -d "$root" vrss threshold=70
	echo "loaded $(modinfo -b "$root" -F filename vrss)"
	grep -q '^vrss ' /proc/modules
	[ "$(cat /sys/module/vrss/parameters/threshold)" = 70 ]
	modinfo -b "$root" -F vermagic vrss | grep -q "^$(uname -r) " || {
		echo "its vermagic is not $(uname -r): $(modinfo -b "$root" -F vermagic vrss)"
		exit 1
	}
	vrss_net_setup
	ethtool -K vrss0 rxhash on
	[ "$(cat /sys/class/net/vrss0/vrss/state)" = single ]
	[ "$(cat /sys/class/net/vrss0/vrss/threshold)" = 70 ]
	ip netns exec $VRSS_PEER ping -c 2 -i 0.2 -q $VRSS_IP > /dev/null
	echo "vrss0 up on veth0, rxhash on, state $(cat /sys/class/net/vrss0/vrss/state), ping answered"
	vrss_net_cleanup
	modprobe -d "$root" -r vrss
	if grep -q '^vrss ' /proc/modules; then
		echo "vrss still loaded after modprobe -r"
		exit 1
	fi
done
