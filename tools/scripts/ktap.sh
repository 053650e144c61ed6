# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# KTAP for the host checks, sourced by deb-check.sh and dkms-check.sh
# (which print "TAP version 13" and the plan themselves):
#   result STATUS NAME   case n+1: "ok n NAME" if STATUS is 0, else
#                        "not ok n NAME" and fail=1 (the script's exit
#                        status: exit $fail)
#   diag                 stdin as diagnostics ("# " before each line)
#   skip_all REASON      instead of the plan: "1..0 # SKIP REASON", exit 4
#                        (kselftest's skip)
n=0
fail=0
# shellcheck disable=SC2034 # fail is the sourcing script's
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fail=1; fi
}
diag() { sed 's/^/# /'; }
skip_all() {
	echo "1..0 # SKIP $*"
	exit 4
}
