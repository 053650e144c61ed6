#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In a guest (dkms-check.sh): ROOT holds lib/modules/$(uname -r) as DKMS
# installed it.  What an admin does after `dkms install`: modprobe vrss
# (with a parameter, as /etc/modprobe.d would give), create vrss0, switch
# rxhash on, check that it is the DKMS-built module doing it.
set -eu
root=$1
source "$(dirname "$0")/../../selftests/drivers/net/vrss/lib.sh"
trap 'vrss_net_cleanup; rmmod vrss 2>/dev/null || true' EXIT
modprobe -d "$root" vrss threshold=70
echo "loaded $(modinfo -b "$root" -F filename vrss)"
grep -q '^vrss ' /proc/modules
[ "$(cat /sys/module/vrss/parameters/threshold)" = 70 ]
modinfo -b "$root" -F vermagic vrss | grep -q "^$(uname -r) "
vrss_net_setup
ethtool -K vrss0 rxhash on
[ "$(cat /sys/class/net/vrss0/vrss/state)" = single ]
[ "$(cat /sys/class/net/vrss0/vrss/threshold)" = 70 ]
ping -c 2 -i 0.2 -q -I vrss0 $VRSS_PEER_IP > /dev/null || ip netns exec $VRSS_PEER ping -c 2 -i 0.2 -q $VRSS_IP > /dev/null
echo "vrss0 up on veth0, rxhash on, state $(cat /sys/class/net/vrss0/vrss/state)"
