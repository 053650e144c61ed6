#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In place: vrss attached to veth0 without taking its configuration.  The
# address, the route and a firewall rule on `iifname "veth0"` stay on
# veth0; vrss0 carries no address, only the queues, the switch and the
# statistics.  It checks that:
#  - with the module's inplace=1, a vrss0 created, brought up and switched
#    on (rxhash, threshold 0: spread) under sequenced traffic to veth0's
#    address loses and reorders nothing, and every frame still matches
#    the rule on veth0;
#  - spread, frames go up from vrss0's spread queues, still as veth0's
#    (the rule counts them all), none reordered while the width and the
#    table change under them, received = sent;
#  - the same with vrss0's NAPI contexts threaded: nothing stuck, and each
#    queue's thread bound to the queue's vCPU;
#  - attach is refused while vrss0 is up, and for a name it does not know;
#    while vrss0 is down every frame passes as veth0's (nothing dropped);
#  - ip link del vrss0 under traffic leaves veth0 as it was found (flags,
#    promiscuity, address; another rx_handler can attach), traffic going
#    on, every frame received or counted in vrss0's drops;
#  - without inplace=1 a new vrss0 is stacked, as before.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v nft > /dev/null || ktap_skip_all "nft not installed (Debian: nftables)"
modprobe -q nf_tables || ktap_skip_all "no nf_tables in this kernel"
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs at least 2 vCPUs"
nq=$(nproc)
FLOWS=16

ktap_plan 10

tmp=$(mktemp -d)
cleanup() {
	jobs -p | xargs -r kill 2> /dev/null
	wait 2> /dev/null
	nft delete table inet vrss_inplace 2> /dev/null
	ip link del vrss0 2> /dev/null
	ip link del vrssi0 2> /dev/null
	vrss_net_cleanup
	vrss_unload 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

# veth0 192.0.2.2 in the guest, veth1 192.0.2.1 in the peer's namespace,
# static neighbours (nothing but the tests' frames), and a rule that
# counts the test's datagrams arriving on veth0.
setup() {
	local mac pmac
	vrss_load inplace=1 &&
	[ "$(< /sys/module/vrss/parameters/inplace)" = Y ] &&
	{ [ -d /sys/module/veth ] || modprobe veth; } &&
	ip netns add $VRSS_PEER || return 1
	sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	vrss_peer sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip link add veth0 type veth peer name veth1 netns $VRSS_PEER || return 1
	mac=$(< /sys/class/net/veth0/address)
	ip -n $VRSS_PEER -b - <<-EOF || return 1
		link set lo up
		link set veth1 up
		addr add $VRSS_PEER_IP/24 dev veth1
		neigh replace $VRSS_IP dev veth1 nud permanent lladdr $mac
	EOF
	pmac=$(vrss_peer_mac veth1) || return 1
	ip -b - <<-EOF || return 1
		link set veth0 up
		addr add $VRSS_IP/24 dev veth0
		neigh replace $VRSS_PEER_IP dev veth0 nud permanent lladdr $pmac
	EOF
	nft -f - <<-EOF
		table inet vrss_inplace {
			chain input {
				type filter hook input priority 0;
				iifname "veth0" udp dport 7000 counter
			}
		}
	EOF
}
ktap_check "veth0 with its address, a rule on iifname veth0; vrss loaded with inplace=1" setup

# The rule's count of datagrams that arrived on veth0.
on_veth0() {
	nft list chain inet vrss_inplace input | awk '/counter/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}
# veth0 as ip -d link shows it, without its counters and link index.
veth0_state() {
	ip -d -o link show veth0 | sed 's/^[0-9]*: //'
	ip -o addr show dev veth0 | awk '{ print $3, $4 }'
}
veth0_before=$(veth0_state)

# seq COUNT GAP [CMD...]: COUNT sequenced datagrams on $FLOWS flows from
# the peer to veth0's address, a round every GAP seconds, CMD run while
# they flow; "received reordered foreign rule" left in $tmp/seq.
seq_run() {
	local count=$1 gap=$2 r0 pid rc=0
	shift 2
	r0=$(on_veth0)
	rm -f "$tmp/recv"
	"$VRSS_TRAFFIC" seqrecv $VRSS_IP $FLOWS "$count" > "$tmp/recv" &
	pid=$!
	vrss_wait_ready "$tmp/recv" || return 1
	vrss_peer taskset -c 0 "$VRSS_TRAFFIC" seqsend $VRSS_IP $FLOWS "$count" 1 "$gap" &
	local sender=$!
	[ $# = 0 ] || "$@" || rc=1
	wait $sender
	wait $pid
	read -r _ received _ reordered _ foreign < <(grep '^received' "$tmp/recv")
	echo "${received:-0} ${reordered:-1} ${foreign:-1} $(($(on_veth0) - r0))" > "$tmp/seq"
	return $rc
}

attach() {
	ip link add link veth0 name vrss0 numrxqueues "$nq" type vrss &&
	[ "$(vrss_sys attach)" = inplace ] &&
	ip link set vrss0 up && ethtool -K vrss0 rxhash on && vrss_sys_set threshold 0 &&
	ethtool -X vrss0 hkey $VRSS_MS_KEY
}
attach_under_traffic() {
	local received reordered foreign rule
	seq_run 4000 0.005 attach || return 1
	read -r received reordered foreign rule < "$tmp/seq"
	echo "# 4000 datagrams while vrss0 was attached and switched on: received $received," \
	     "reordered $reordered, on veth0's rule $rule; vrss0 steered $(vrss_rx_packets)," \
	     "dropped while down $(vrss_stat vrss0 rx_dropped_down)"
	[ "$received" = 4000 ] && [ "$reordered" = 0 ] && [ "$foreign" = 0 ] && [ "$rule" = 4000 ] &&
		[ "$(vrss_rx_packets)" -gt 0 ] && [ "$(vrss_stat vrss0 rx_dropped_down)" = 0 ] &&
		[ -z "$(ip -o addr show dev vrss0)" ]
}
ktap_check "vrss0 attached in place, up, rxhash on under traffic to veth0: nothing lost or reordered, all on veth0's rule" \
	attach_under_traffic

spread() {
	local q0 q received reordered foreign rule spread_q
	q0=$(vrss_queue_packets vrss0)
	seq_run 3000 0.002 || return 1
	read -r received reordered foreign rule < "$tmp/seq"
	q=$(vrss_queue_delta "$q0" "$(vrss_queue_packets vrss0)")
	spread_q=$(($(tr ' ' '+' <<< "$q") - ${q%% *}))
	echo "# spread (width $(vrss_sys width)): 3000 datagrams, received $received, reordered" \
	     "$reordered, on veth0's rule $rule; vrss0's queues $q"
	[ "$received" = 3000 ] && [ "$reordered" = 0 ] && [ "$rule" = 3000 ] &&
		[ "$spread_q" -gt 0 ] && [ $(($(tr ' ' '+' <<< "$q"))) = 3000 ]
}
ktap_check "spread: frames go up from vrss0's spread queues as veth0's (the rule counts each), in order" spread

# The width and the table change under the flows: buckets move.
in_order() {
	local received reordered foreign rule m0 d0 drops
	m0=$(vrss_stat vrss0 bucket_moves)
	d0=$(vrss_stat_sum vrss0 drops)
	rm -f "$tmp/stop"
	"$VRSS_TRAFFIC" flip vrss0 "$nq" "$tmp/stop" > "$tmp/flip" &
	local flip=$!
	seq_run 8000 0.001 || return 1
	touch "$tmp/stop"
	wait $flip
	read -r received reordered foreign rule < "$tmp/seq"
	drops=$(($(vrss_stat_sum vrss0 drops) - d0))
	echo "# 8000 datagrams while the width flips: received $received, reordered $reordered," \
	     "dropped $drops, on veth0's rule $rule; bucket moves +$(($(vrss_stat vrss0 bucket_moves) - m0))"
	[ "$reordered" = 0 ] && [ "$foreign" = 0 ] && [ $((received + drops)) = 8000 ] &&
		[ "$rule" = "$received" ] && [ "$(vrss_stat vrss0 bucket_moves)" -gt "$m0" ]
}
ktap_check "no flow reordered while buckets move, received + dropped = sent, all on veth0's rule" in_order

# threads_bound: every thread of vrss0's NAPI contexts (napi/vrss0-ID)
# allowed on one vCPU, the set of them the spread queues' vCPUs, which
# are not the primary's (the sender's, 0: veth delivers there).
threads_bound() {
	local -a c
	local want got t
	read -r -a c < /sys/class/net/vrss0/vrss/queue_cpus
	want=$(printf '%s\n' "${c[@]:1}" | sort -u | xargs)
	got=$(for t in $(pgrep '^napi/vrss0-'); do
		awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$t/status"
	done | sort -u | xargs)
	echo "# threads of vrss0's NAPI contexts allowed on: ${got:-none}; spread queues on: $want"
	[ -n "$got" ] && [ "$got" = "$want" ] && [[ " $want " != *" 0 "* ]]
}

# The same with vrss0's NAPI contexts in threads of their own: a poll may
# run on another CPU than the kick's, and no frame may wait on a ring
# with nothing scheduled to take it.
threaded() {
	local received reordered foreign rule d0 drops
	echo 1 > /sys/class/net/vrss0/threaded || return 1
	d0=$(vrss_stat_sum vrss0 drops)
	rm -f "$tmp/stop"
	"$VRSS_TRAFFIC" flip vrss0 "$nq" "$tmp/stop" > "$tmp/flip" &
	local flip=$!
	seq_run 4000 0.001
	local rc=$?
	touch "$tmp/stop"
	wait $flip
	threads_bound
	echo $? > "$tmp/bound"
	echo 0 > /sys/class/net/vrss0/threaded
	[ $rc = 0 ] || return 1
	read -r received reordered foreign rule < "$tmp/seq"
	drops=$(($(vrss_stat_sum vrss0 drops) - d0))
	echo "# threaded NAPI, 4000 datagrams while the width flips: received $received," \
	     "reordered $reordered, dropped $drops"
	[ "$reordered" = 0 ] && [ "$foreign" = 0 ] && [ $((received + drops)) = 4000 ]
}
ktap_check "threaded NAPI on vrss0: nothing stuck or reordered while buckets move" threaded
ktap_result "... each spread queue's thread allowed on its queue's vCPU alone, none on the primary's" \
	"$(cat "$tmp/bound" 2> /dev/null || echo 1)"

refusals() {
	! vrss_sys_set attach stacked 2> /dev/null || { echo "# accepted while up"; return 1; }
	! vrss_sys_set attach sideways 2> /dev/null || { echo "# 'sideways' accepted"; return 1; }
	[ "$(vrss_sys attach)" = inplace ] && ip link set vrss0 down || return 1
	local received reordered foreign rule
	seq_run 500 0.001 || return 1
	read -r received reordered foreign rule < "$tmp/seq"
	echo "# vrss0 down: 500 datagrams, received $received, on veth0's rule $rule," \
	     "dropped while down $(vrss_stat vrss0 rx_dropped_down)"
	[ "$received" = 500 ] && [ "$rule" = 500 ] && [ "$(vrss_stat vrss0 rx_dropped_down)" = 0 ] &&
		ip link set vrss0 up
}
ktap_check "attach refused while up and for an unknown name; vrss0 down: every frame passes as veth0's" refusals

# Half a second into the traffic (spread by then: threshold 0).
del_later() {
	sleep 0.5
	echo "# deleted at width $(vrss_sys width)"
	ip link del vrss0
}
detach() {
	local received reordered foreign rule d0 after
	vrss_sys_set threshold 0 || return 1
	d0=$(vrss_stat_sum vrss0 drops)
	seq_run 4000 0.005 del_later || return 1
	read -r received reordered foreign rule < "$tmp/seq"
	after=$(veth0_state)
	echo "# ip link del vrss0 under 4000 datagrams: received $received, reordered $reordered," \
	     "on veth0's rule $rule (vrss0's drops before: $d0)"
	[ "$after" = "$veth0_before" ] || { echo "# veth0 was: $veth0_before"; echo "# veth0 is: $after"; return 1; }
	[ "$reordered" = 0 ] && [ "$foreign" = 0 ] && [ "$received" -ge 3900 ] &&
		[ "$rule" = "$received" ] || return 1
	# Another rx_handler can take veth0: a new vrss0, stacked by default.
	echo N > /sys/module/vrss/parameters/inplace &&
	ip link add link veth0 name vrssi0 type vrss &&
	[ "$(< /sys/class/net/vrssi0/vrss/attach)" = stacked ] && ip link del vrssi0
}
ktap_check "ip link del vrss0 under traffic: veth0 as found, traffic on; a new vrss0 without inplace=1 is stacked" detach

rmmod_inplace() {
	echo Y > /sys/module/vrss/parameters/inplace &&
	ip link add link veth0 name vrss0 type vrss && ip link set vrss0 up &&
	ethtool -K vrss0 rxhash on && vrss_unload || return 1
	local received reordered foreign rule
	seq_run 200 0.001 || return 1
	read -r received reordered foreign rule < "$tmp/seq"
	[ "$(veth0_state)" = "$veth0_before" ] && [ "$received" = 200 ] && [ "$rule" = 200 ]
}
ktap_check "rmmod with vrss0 in place: veth0 as found, traffic on" rmmod_inplace
ktap_check "no taint, no lockdep splat" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
