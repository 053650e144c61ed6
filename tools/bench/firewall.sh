#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The receive-bound guest of make bench and make demo: a firewall ruleset
# on input that every received packet walks, so that the receive path, not
# the receiving application, is what one vCPU cannot keep up with (as in
# a guest on a fast link, where softirq processing caps one vCPU).
#
#   firewall.sh RULES    replace table inet vrss_bench with RULES rules
#   firewall.sh 0        delete it
#
# RULES rules in one input chain, each dropping TCP or UDP to a
# destination port in 60000-64999, which the benchmark's traffic (ports
# 5001 and up) never uses: the
# chain is walked to its end for every packet, at the cost of one payload
# load and compare per rule, and the packet is accepted by the policy.
set -eu
rules=${1:?usage: firewall.sh RULES}
case $rules in
''|*[!0-9]*) echo "firewall.sh: RULES must be a number" >&2; exit 2 ;;
esac
modprobe nf_tables
nft list table inet vrss_bench > /dev/null 2>&1 && nft delete table inet vrss_bench
[ "$rules" -gt 0 ] || exit 0
{
	echo "table inet vrss_bench {"
	echo "  chain input {"
	echo "    type filter hook input priority filter; policy accept;"
	for ((i = 0; i < rules; i++)); do
		if ((i % 2)); then p=udp; else p=tcp; fi
		echo "    $p dport $((60000 + i % 5000)) drop"
	done
	echo "  }"
	echo "}"
} | nft -f -
