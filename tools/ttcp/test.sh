#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vrss-ttcp on the host's loopback (KTAP): TCP and UDP, 3 streams for 2 s;
# the JSON report must parse and add up (one rate per stream summing to the
# total, one sample per second, one entry per CPU, frames counted); and
# TCP from chosen source ports (-P), twice in a row on the same ports.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
ttcp=$repo/build/tools/vrss-ttcp
make -s -C "$repo" tools || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "TAP version 13"
echo "1..3"
n=0
fail=0
for mode in tcp udp; do
	n=$((n + 1))
	flag=
	[ $mode = udp ] && flag=-u
	port=$((20000 + RANDOM % 20000))
	"$ttcp" -r $flag -m 3 -t 2 -W 1 -p $port --json > "$tmp/$mode.json" &
	rx=$!
	"$ttcp" -s 127.0.0.1 $flag -m 3 -t 3 -W 1 -p $port
	wait $rx
	if python3 - "$tmp/$mode.json" "$(nproc)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ncpu = int(sys.argv[2])
assert r["throughput_mbps"] > 0, r["throughput_mbps"]
assert len(r["per_stream_mbps"]) == 3
assert abs(sum(r["per_stream_mbps"]) - r["throughput_mbps"]) < 0.01 * r["throughput_mbps"] + 0.5
assert len(r["samples"]) == 2, len(r["samples"])
assert len(r["cpus"]) == ncpu, len(r["cpus"])
# Frames counted at lo (the bottom of the stack), at least one per 64 KiB
# received (lo's MTU), whatever else the host's NICs received meanwhile.
assert r["packets"] >= r["throughput_mbps"] * r["seconds"] * 1e6 / 8 / 65536 > 0, r["packets"]
assert r["cycles_per_byte_basis"] == "CPU time x /proc/cpuinfo MHz"
for c in r["cpus"]:
    assert 0 <= c["busy"] <= 100.5 and abs(c["busy"] + c["idle"] - 100) < 1.5, c
print(f"# {r['mode']}: {r['throughput_mbps']:.0f} Mbit/s, {r['packets']} packets")
PY
	then
		echo "ok $n $mode: 3 streams, report adds up"
	else
		echo "not ok $n $mode: 3 streams, report adds up"
		fail=1
	fi
done
# -P: stream i from source port SPORT + 2i, and again at once (no TIME_WAIT).
n=$((n + 1))
port=$((20000 + RANDOM % 20000))
sport=$((port + 100))  # streams from sport and sport + 2
ok=1
for run in 1 2; do
	"$ttcp" -r -m 2 -t 1 -W 0 -p $port --json > "$tmp/sport$run.json" &
	rx=$!
	"$ttcp" -s 127.0.0.1 -m 2 -t 2 -W 0 -p $port -P $sport,2 &
	tx=$!
	sleep 0.5
	seen=$(ss -Htn state established "( sport = :$sport or sport = :$((sport + 2)) )" | wc -l)
	wait $tx $rx || ok=0
	echo "# run $run: $seen connections from ports $sport and $((sport + 2))"
	[ "$seen" = 2 ] || ok=0
	python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["throughput_mbps"] > 0' \
		"$tmp/sport$run.json" || ok=0
done
if [ $ok = 1 ]; then
	echo "ok $n tcp -P: the chosen source ports, twice in a row"
else
	echo "not ok $n tcp -P: the chosen source ports, twice in a row"
	fail=1
fi
exit $fail
