#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print "SERIES KVER" for the newest installed Debian kernel with headers of
# each supported series (6.1 and 6.12), one per line; exits 1, printing
# nothing, if either has none.  VRSS_MODULES_ROOT: where to look instead
# of /lib/modules (the rig's tests).
set -eu
root=${VRSS_MODULES_ROOT:-/lib/modules}
out=
for s in 6.1 6.12; do
	k=$(ls -1d "$root/$s".*/build 2>/dev/null | sort -V | tail -n 1)
	[ -n "$k" ] || { echo "kernels.sh: no $s kernel headers installed (run: make deps)" >&2; exit 1; }
	k=${k%/build}
	out+="$s ${k##*/}"$'\n'
done
printf '%s' "$out"
