#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RSS through stock ethtool: the key and the table (-x/-X), the hashed
# fields (-n/-N), and traffic landing exactly on the queues an independent
# Toeplitz implementation predicts from what `ethtool -x` shows.  Every
# bad input fails and changes nothing.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs at least 2 vCPUs for 2 queues"
nq=$(nproc)

ktap_plan 34

cleanup() {
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT

taint0=$(vrss_taint_other)
setup() {
	vrss_load threshold=0 && vrss_net_setup numrxqueues "$nq" && ethtool -K vrss0 rxhash on
}
ktap_check "insmod, vrss0 on veth0 with $nq queues, rxhash on" setup

table() {
	ethtool -x vrss0 | awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) printf "%s ", $i }'
}
count_in_table() {
	table | tr ' ' '\n' | grep -cx "$1"
}

expect=$(for ((i = 0; i < 128; i++)); do printf '%d ' $((i % nq)); done)
ktap_check "ethtool -x: 128 entries, round robin over the $nq queues" test "$(table)" = "$expect"
ktap_check "ethtool -x: hash function toeplitz" sh -c \
	'ethtool -x vrss0 | grep -qx "    toeplitz: on"'
key=$(ethtool -x vrss0 | sed -n '/^RSS hash key:/{n;p}')
syskey=$(cut -d: -f1-40 /proc/sys/net/core/netdev_rss_key)
ktap_check "default key = first 40 bytes of net.core.netdev_rss_key" test "$key" = "$syskey"

fields_ok=0
for f in tcp4 udp4 tcp6 udp6; do
	out=$(ethtool -n vrss0 rx-flow-hash $f)
	for w in "IP SA" "IP DA" "L4 bytes 0 & 1" "L4 bytes 2 & 3"; do
		grep -qF "$w" <<< "$out" || { echo "# $f: no '$w' in: $out"; fields_ok=1; }
	done
done
ktap_result "ethtool -n rx-flow-hash tcp4|udp4|tcp6|udp6: sdfn by default" $fields_ok

vrss_check_steering "default key and table: every flow on its predicted queue" $VRSS_PEER_IP $VRSS_IP

ktap_check "64 flows: SO_INCOMING_CPU of each is its queue's CPU, none lost" \
	taskset -c "$VRSS_SEND_CPU" "$VRSS_DIR/vrss_udp.py" cpucheck $VRSS_PEER_IP $VRSS_IP 64 5 vrss0 $VRSS_PEER
ktap_check "packet sockets see skb hash = Toeplitz of each flow (default key)" \
	"$VRSS_DIR/vrss_udp.py" hashcheck $VRSS_PEER_IP $VRSS_IP 32 5 vrss0 $VRSS_PEER

ktap_check "ethtool -X weight 3 1" ethtool -X vrss0 weight 3 1
ktap_check "table holds 96 entries for queue 0, 32 for queue 1" \
	test "$(count_in_table 0)" = 96 -a "$(count_in_table 1)" = 32
vrss_check_steering "weight 3 1: every flow on its predicted queue" $VRSS_PEER_IP $VRSS_IP

ktap_check "ethtool -X equal 1: every entry queue 0" sh -c \
	'ethtool -X vrss0 equal 1 && [ "$(ethtool -x vrss0 | awk "/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) s += \$i } END { print s }")" = 0 ]'
vrss_check_steering "equal 1: every flow on queue 0" $VRSS_PEER_IP $VRSS_IP

ethtool -X vrss0 default
newkey=$VRSS_MS_KEY
ktap_check "ethtool -X hkey sets the key" sh -c \
	"ethtool -X vrss0 hkey $newkey && ethtool -x vrss0 | grep -qx '$newkey'"
vrss_check_steering "new key: every flow on its predicted queue" $VRSS_PEER_IP $VRSS_IP
ktap_check "packet sockets see skb hash = Toeplitz with the new key" \
	"$VRSS_DIR/vrss_udp.py" hashcheck $VRSS_PEER_IP $VRSS_IP 32 5 vrss0 $VRSS_PEER

# expect_unchanged NAME CMD...: CMD is refused and ethtool -x/-n show no
# change.  Debian's ethtool 6.1 exits 0 when the kernel refuses -N, so its
# "Cannot change ...: <errno>" counts as the refusal too.
expect_unchanged() {
	local name=$1 before after rc=0
	local refused=$'Cannot change [^\n]*: (Invalid argument|Operation not supported)'
	shift
	before=$(ethtool -x vrss0 && ethtool -n vrss0 rx-flow-hash udp4 && ethtool -l vrss0) || {
		ktap_result "$name # cannot read the configuration" 1
		return
	}
	if out=$("$@" 2>&1) && ! [[ $out =~ $refused ]]; then
		echo "# '$*' succeeded: $out"
		rc=1
	fi
	echo "# $*: ${out:-(no message)}"
	after=$(ethtool -x vrss0; ethtool -n vrss0 rx-flow-hash udp4; ethtool -l vrss0)
	[ "$before" = "$after" ] || { echo "# '$*' changed the configuration"; rc=1; }
	ktap_result "$name" $rc
}

expect_unchanged "hfunc xor refused, nothing changed" ethtool -X vrss0 hfunc xor
expect_unchanged "equal $((nq + 1)) on $nq queues refused, nothing changed" \
	ethtool -X vrss0 equal $((nq + 1))
expect_unchanged "a 39-byte key refused, nothing changed" \
	ethtool -X vrss0 hkey "${newkey%:fa}"
expect_unchanged "rx-flow-hash udp4 sdt refused, nothing changed" \
	ethtool -N vrss0 rx-flow-hash udp4 sdt
expect_unchanged "rx-flow-hash sctp4 sd refused, nothing changed" \
	ethtool -N vrss0 rx-flow-hash sctp4 sd
expect_unchanged "a 41-byte key refused, nothing changed" \
	ethtool -X vrss0 hkey "$newkey:00"
expect_unchanged "weights for $((nq + 1)) queues on $nq refused, nothing changed" \
	ethtool -X vrss0 weight $(yes 1 | head -n $((nq + 1)))
expect_unchanged "an additional RSS context refused, nothing changed" \
	ethtool -X vrss0 context new equal 1
expect_unchanged "ethtool -L rx 0 refused, nothing changed" ethtool -L vrss0 rx 0
expect_unchanged "ethtool -L tx 2 refused, nothing changed" ethtool -L vrss0 tx 2

ethtool -N vrss0 rx-flow-hash udp4 sd
ktap_check "rx-flow-hash udp4 sd: ethtool -n shows addresses only" sh -c \
	'out=$(ethtool -n vrss0 rx-flow-hash udp4); echo "$out" | grep -q "IP SA" && ! echo "$out" | grep -q "L4 bytes"'
vrss_check_steering "udp4 sd: flows differing only in ports share one queue" \
	$VRSS_PEER_IP $VRSS_IP --no-ports
ethtool -N vrss0 rx-flow-hash udp4 sdfn

ethtool -X vrss0 weight 1 1
expect_unchanged "ethtool -L rx 1 refused while a user table names queue 1" \
	ethtool -L vrss0 rx 1
ethtool -X vrss0 default
ktap_check "after -X default, -L rx 1 works and the table follows" sh -c \
	'ethtool -L vrss0 rx 1 && [ "$(ethtool -x vrss0 | awk "/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) s += \$i } END { print s }")" = 0 ]'

# A valid ethtool -L keeps a table the user set, as the ethtool core asks
# of drivers: one naming queue 0 only, the count down to 1 and back.
ethtool -L vrss0 rx "$nq"
ethtool -X vrss0 weight 1 $(yes 0 | head -n $((nq - 1)))
kept() {
	local zeros
	zeros=$(for ((i = 0; i < 128; i++)); do printf '0 '; done)
	ethtool -L vrss0 rx 1 && ethtool -L vrss0 rx "$nq" && [ "$(table)" = "$zeros" ]
}
ktap_check "a user-set table (weight 1 0...) kept through ethtool -L rx 1 and -L rx $nq" kept
ethtool -X vrss0 default

# Key and table rewritten under traffic: nothing lost or dropped at a load
# the rings hold, every queue still used.
rx_sum() {
	echo $(($(< /sys/class/net/$1/statistics/rx_packets) +
		$(< /sys/class/net/$1/statistics/rx_dropped)))
}
l0=$(vrss_peer_stat veth1 tx_packets)
v0=$(rx_sum vrss0)
p0=$(< /sys/class/net/vrss0/statistics/rx_packets)
vrss_send_udp 32 200 &
sender=$!
for i in $(seq 10); do
	ethtool -X vrss0 hkey "$(vrss_random_key)"
	ethtool -X vrss0 weight $(for ((q = 0; q < nq; q++)); do printf '%d ' $((1 + (i + q) % 3)); done)
	sleep 0.05
done
wait $sender
sleep 0.5
l1=$(vrss_peer_stat veth1 tx_packets)
v1=$(rx_sum vrss0)
p1=$(< /sys/class/net/vrss0/statistics/rx_packets)
echo "# key and table rewritten 20 times under 6400 packets: peer sent $((l1 - l0)), vrss0 delivered" \
     "$((p1 - p0)), dropped $((v1 - v0 - (p1 - p0)))"
ktap_check "-X hkey and -X weight under traffic: all 6400 delivered, none dropped" \
	test $((l1 - l0)) = 6400 -a $((p1 - p0)) = 6400 -a $((v1 - v0)) = 6400
ethtool -X vrss0 default
vrss_send_and_count 64 1
ktap_check "afterwards every queue still delivers (64 of 64)" test "$sum" = 64

ktap_check "no taint beyond out-of-tree and unsigned" \
	test "$(vrss_taint_other)" -eq "$taint0"
ktap_finish
