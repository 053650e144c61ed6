#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest-all.sh CMD [ARGS...] [-- CMD [ARGS...]]...: the commands one after
# the other, each whatever the others did; exits 1 if any failed.  make
# check runs several test commands in one guest boot with it (a boot is
# several seconds under TCG).
rc=0
cmd=()
run() {
	[ ${#cmd[@]} -gt 0 ] || return 0
	"${cmd[@]}" || rc=1
	cmd=()
}
for a; do
	if [ "$a" = -- ]; then
		run
	else
		cmd+=("$a")
	fi
done
run
exit $rc
