#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vrss-status (tools/vrss-status) against the counters it reports from.
# vrss0 on veth0, rxhash on, threshold 0: spread while the peer sends a
# paced load.  It checks that:
#  - one look (--json) shows the device as sysfs does (software mode,
#    stacked, rxhash on, spread, its width) and rates that add up: each
#    queue's frames a second times the seconds of the look within what
#    ethtool -S counted around it, and frames on the spread queues;
#  - the text form says the same in words;
#  - it warns when RPS is set on the lower or on vrss0, and stops when it is
#    cleared;
#  - -w SECONDS looks again and again;
#  - a name that is not a vrss device is exit status 1, a bad option 2.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v python3 > /dev/null || ktap_skip_all "python3 not installed"
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs at least 2 vCPUs"
nq=$(nproc)
status=$VRSS_REPO/tools/vrss-status
tmp=$(mktemp -d)

ktap_plan 7

cleanup() {
	jobs -p | xargs -r kill 2> /dev/null
	wait 2> /dev/null
	vrss_net_cleanup
	vrss_unload 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

setup() {
	vrss_load && vrss_net_setup numrxqueues "$nq" && ethtool -K vrss0 rxhash on &&
		ethtool -X vrss0 hkey $VRSS_MS_KEY && vrss_sys_set threshold 0
}
ktap_check "vrss0 on veth0 with $nq queues, rxhash on, threshold 0" setup

# field JSON EXPR: a value of vrss-status's JSON, by a Python expression
# over r (the first device's report).
field() {
	python3 -c 'import json, sys; r = json.load(sys.stdin)["devices"][0]; print(eval(sys.argv[1]))' \
		"$2" <<< "$1"
}

one_look() {
	local before after out
	# A paced load from the peer, longer than the look.
	vrss_peer "$VRSS_TRAFFIC" pace $VRSS_IP 16 400 0.005 > /dev/null &
	local pid=$!
	vrss_wait_state spread 5000 > /dev/null || return 1
	before=$(vrss_queue_packets vrss0)
	out=$("$status" --json -i 1 vrss0) || return 1
	after=$(vrss_queue_packets vrss0)
	wait $pid
	# One Python for every check: each start costs the guest a TCG second.
	python3 - "$out" "$(vrss_queue_delta "$before" "$after")" "$(vrss_sys width)" <<-'EOF'
		import json, sys
		r = json.loads(sys.argv[1])["devices"][0]
		delta = [int(x) for x in sys.argv[2].split()]
		rates = [q["packets_per_s"] for q in r["queues"]]
		print(f"# ethtool -S around the look: {delta}; the look: {r['seconds']} s, {rates} frames/s")
		ok = len(rates) == len(delta)
		# The look's frames (rate x its seconds) within what the counters saw.
		ok = ok and all(rate * r["seconds"] <= d + 1 for rate, d in zip(rates, delta))
		ok = ok and any(rate > 0 for rate in rates[1:])
		want = {"mode": "software", "attach": "stacked", "rxhash": "on", "state": "spread",
			"width": sys.argv[3], "lower": "veth0"}
		for k, v in want.items():
		    if r[k] != v:
		        print(f"# {k}: {r[k]}, not {v}")
		        ok = False
		sys.exit(0 if ok else 1)
	EOF
}
ktap_check "--json: mode, attach, rxhash, state and width as sysfs says; each queue's rate within its counters; spread queues busy" \
	one_look

text_form() {
	local out
	out=$("$status" -i 0.2 vrss0) || return 1
	echo "$out" | head -n 3 | sed 's/^/# /'
	grep -q "^vrss0 on veth0: software mode, stacked, rxhash on, " <<< "$out" &&
		grep -q "queue  vCPU  frames/s" <<< "$out"
}
ktap_check "the text form says the same" text_form

rps_warning() {
	local out
	echo 1 > /sys/class/net/veth0/queues/rx-0/rps_cpus || return 1
	echo 1 > /sys/class/net/vrss0/queues/rx-1/rps_cpus || return 1
	out=$("$status" --json -i 0.2 vrss0)
	echo 0 > /sys/class/net/veth0/queues/rx-0/rps_cpus
	echo 0 > /sys/class/net/vrss0/queues/rx-1/rps_cpus
	field "$out" '"\n".join(r["warnings"])' | sed 's/^/# /'
	field "$out" '"\n".join(r["warnings"])' | grep -q "RPS is set on veth0" || return 1
	field "$out" '"\n".join(r["warnings"])' | grep -q "RPS is set on vrss0 (rx-1): it moves none" || return 1
	out=$("$status" --json -i 0.2 vrss0)
	! field "$out" '"\n".join(r["warnings"])' | grep -q "RPS is set"
}
ktap_check "a warning while RPS is set on the lower, another on vrss0, none once cleared" rps_warning

watch() {
	local n=0 i pid
	"$status" --json -w 0.3 vrss0 > "$tmp/watch" &
	pid=$!
	# Three looks, however long a TCG guest takes for each (no timing).
	for ((i = 0; i < 300; i++)); do
		n=$(wc -l < "$tmp/watch")
		[ "$n" -ge 3 ] && break
		sleep 0.1
	done
	kill "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	echo "# -w 0.3: $n looks, $(python3 -c 'import json, sys; print(sum(1 for l in sys.stdin if json.loads(l)["devices"][0]["device"] == "vrss0"))' < "$tmp/watch") of them about vrss0"
	[ "$n" -ge 3 ]
}
ktap_check "-w 0.3 looks again and again" watch

errors() {
	local rc1 rc2
	"$status" veth0 > /dev/null 2>&1
	rc1=$?
	"$status" --no-such-option > /dev/null 2>&1
	rc2=$?
	echo "# not a vrss device: $rc1; a bad option: $rc2"
	[ "$rc1" = 1 ] && [ "$rc2" = 2 ]
}
ktap_check "exit status 1 for a device that is not vrss, 2 for a bad option" errors
ktap_check "no taint, no lockdep splat" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
