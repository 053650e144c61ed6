#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Toeplitz microbenchmark: instructions per hash under callgrind
# (deterministic), and ns per hash: the byte table (the module's), the
# nibble table and bit by bit, IPv4 and IPv6.  Prints one JSON object.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=$repo/build/tools/toeplitz
mkdir -p "$(dirname "$bin")"
cc -O2 -g -Wall -Wextra -Werror -std=gnu11 -I"$repo/tests/unit/shim" -I"$repo/include" \
	-o "$bin" "$repo/tools/bench/toeplitz.c"
n=10000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
instr() {
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect="$1" \
		"$bin" one "$1" $n > /dev/null 2>&1
	awk -v n=$n '/^summary:/ { printf "%.1f", $2 / n }' "$tmp/cg"
}
printf '{"instructions_per_hash": {"table4": %s, "table6": %s, "nib4": %s, "nib6": %s, "bit4": %s, "bit6": %s}, ' \
	"$(instr table4)" "$(instr table6)" "$(instr nib4)" "$(instr nib6)" "$(instr bit4)" "$(instr bit6)"
"$bin" ns 20000000 | sed 's/^{//'
