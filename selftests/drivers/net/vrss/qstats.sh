#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 6.12: per-queue statistics over netdev netlink.  qstats-get per queue
# equals ethtool -S per queue; the device's qstats (queues in use plus
# base stats) equal ip -s link's totals, also after ethtool -L leaves a
# queue out of use; queue-get links every receive queue in use to a NAPI
# context while vrss0 is up, and none once down.  Read with the kernel's
# YNL library (tools/scripts/ynl.sh puts it in build/ynl/).

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
[ -f "$VRSS_REPO/build/ynl/cli.py" ] || ktap_skip_all "no build/ynl: run tools/scripts/ynl.sh"
python3 -c 'import yaml' 2> /dev/null || ktap_skip_all "python3-yaml not installed"
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs at least 2 vCPUs"
ynl() {
	"$VRSS_DIR/vrss_ynl.py" "$@"
}
nq=$(nproc)

ktap_plan 11

cleanup() {
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

setup() {
	vrss_load threshold=0 && vrss_net_setup numrxqueues "$nq" &&
		ethtool -K vrss0 rxhash on && ethtool -X vrss0 hkey $VRSS_MS_KEY
}
ktap_check "vrss0 with $nq queues, rxhash on, threshold 0, Microsoft's key" setup
# A kernel without netdev qstats (before 6.9: Debian's 6.1) has nothing
# to test here (and no Python start for it); on one that has them, a
# failing read is a failure.
IFS=. read -r major minor _ <<< "$(uname -r)"
if [ "$major" -lt 6 ] || { [ "$major" = 6 ] && [ "$minor" -lt 9 ]; }; then
	echo "# netdev netlink qstats-get not in $(uname -r) (6.9 and later)"
	for i in $(seq 2 11); do ktap_result "needs netdev netlink qstats (6.9+)" 4; done
	ktap_finish
fi
if ! err=$(ynl qstats vrss0 2>&1 > /dev/null); then
	echo "# qstats-get failed on $(uname -r), which has it: $err" | head -n 5
	for i in $(seq 2 11); do ktap_result "netdev netlink qstats-get answers" 1; done
	ktap_finish
fi

link_stats() {
	local d=/sys/class/net/vrss0/statistics
	echo "$(< $d/rx_packets) $(< $d/rx_bytes) $(< $d/tx_packets) $(< $d/tx_bytes)"
}
ping -c 3 -i 0.2 -q $VRSS_PEER_IP > /dev/null
# 64 flows of 10 datagrams, which the key splits over every queue.
want=$(vrss_predict $VRSS_PEER_IP $VRSS_IP 64 10 vrss0)
q0=$(ynl qstats-queues vrss0)
vrss_send_and_count 64 10
got=${delta[*]}
q=$(ynl qstats-queues vrss0)
# Per queue what netlink counted of them, against the prediction (not
# against ethtool -S: the same counters): datagrams of 4 bytes, 32 at IP.
q=$(paste -d' ' <(echo "$q0") <(echo "$q") | awk '{ printf "%s %d %d\n", $1, $5 - $2, $6 - $3 }')
e=$(i=0; for n in $want; do echo "$i $n $((n * 32))"; i=$((i + 1)); done)
echo "# qstats per queue, of the 640 datagrams (queue packets bytes):" $q
ktap_check "qstats-get per queue: each queue's predicted packets, 32 bytes each ($nq queues)" test "$q" = "$e"
echo "# 640 datagrams per queue: predicted $want, got $got"
# What the key and table predict, and that is some for every queue.
every_queue() {
	local n
	[ "$got" = "$want" ] && [ "$(wc -w <<< "$want")" = "$nq" ] || return 1
	for n in $want; do [ "$n" -gt 0 ] || return 1; done
}
ktap_check "every queue received its predicted share of the 640 datagrams" every_queue
d=$(ynl qstats vrss0)
l=$(link_stats)
echo "# qstats of vrss0: $d; ip -s link: $l"
ktap_check "device qstats = ip -s link (rx and tx packets and bytes)" test "$d" = "$l"
ktap_check "tx counted (pings sent through vrss0)" test "$(cut -d' ' -f3 <<< "$d")" -ge 3

ethtool -L vrss0 rx 1
vrss_send_udp 64 5
sleep 0.3
q=$(ynl qstats-queues vrss0)
d=$(ynl qstats vrss0)
l=$(link_stats)
echo "# after ethtool -L rx 1: qstats per queue: $q; device $d; ip -s link $l"
ktap_check "ethtool -L rx 1: qstats lists queue 0 only" test "$(wc -l <<< "$q")" = 1
ktap_check "... and the device sums still equal ip -s link (base stats)" test "$d" = "$l"
ethtool -L vrss0 rx "$nq"

napis() {
	ynl queues vrss0
}
n=$(napis)
echo "# queue-get rx:" $n
# Queue 0, the primary, goes up inline in the lower's NAPI: no NAPI of
# its own.  Each spread queue has one.
ktap_check "queue-get: queue 0 (inline) has no NAPI, each of the $((nq - 1)) spread queues one" \
	test "$(awk '$1 == 0 { print $2 }' <<< "$n") $(awk '$1 != 0 && $2 != "-"' <<< "$n" | wc -l)" = "- $((nq - 1))"
ktap_check "... all different" \
	test "$(awk '$1 != 0 { print $2 }' <<< "$n" | sort -u | wc -l)" = "$((nq - 1))"
ip link set vrss0 down
n=$(napis)
ip link set vrss0 up
echo "# queue-get rx with vrss0 down:" $n
ktap_check "vrss0 down: no rx queue linked to a NAPI" test -z "$(awk '$2 != "-"' <<< "$n")"

ktap_check "no taint beyond out-of-tree and unsigned" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
