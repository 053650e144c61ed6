#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print "SERIES KVER" for the newest installed Debian kernel with headers of
# each supported series (6.1 and 6.12), one per line; exits 1, printing
# nothing, if either has none.  Only Debian's generic flavour (-amd64):
# another flavour of the same version (-cloud-amd64, -rt-amd64) is not
# the kernel a series names.  --cloud: the cloud flavour's instead, as
# "6.1-cloud KVER" and "6.12-cloud KVER" (tools/vm/run's names).
# VRSS_MODULES_ROOT: where to look instead of /lib/modules (the rig's
# tests).
set -eu
root=${VRSS_MODULES_ROOT:-/lib/modules}
flavour=amd64 suffix=
if [ "${1:-}" = --cloud ]; then
	flavour=cloud-amd64 suffix=-cloud
elif [ $# -gt 0 ]; then
	echo "usage: kernels.sh [--cloud]" >&2
	exit 2
fi
out=
for s in 6.1 6.12; do
	k=$(ls -1d "$root/$s".*/build 2>/dev/null |
		grep -E "/${s//./\\.}\\.[0-9]+(-[0-9]+)?(\\+deb[0-9]+)?-$flavour/build\$" |
		sort -V | tail -n 1) || true
	[ -n "$k" ] || {
		echo "kernels.sh: no $s$suffix kernel headers installed (run: make deps)" >&2
		exit 1
	}
	k=${k%/build}
	out+="$s$suffix ${k##*/}"$'\n'
done
printf '%s' "$out"
