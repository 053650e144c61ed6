#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint: checkpatch --strict, sparse (C=2) and a W=1 build for every
# supported kernel.  Any finding fails.  checkpatch.pl comes from Debian's
# linux-source package at check time and is cached outside the repository.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
cache=${VRSS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vrss}/checkpatch
fail=0

tarball=$(ls -1 /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
[ -n "$tarball" ] || { echo "lint: no linux-source package (run: make deps)" >&2; exit 1; }
stamp=$(stat -c '%n %Y' "$tarball")
if [ "$(cat "$cache/stamp" 2>/dev/null)" != "$stamp" ]; then
	top=$(basename "$tarball" .tar.xz)
	rm -rf "$cache" && mkdir -p "$cache"
	tar -xJf "$tarball" -C "$cache" --strip-components=1 \
		"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch"
	echo "$stamp" > "$cache/stamp"
fi

mapfile -t sources < <(git ls-files -co --exclude-standard -- 'drivers/*.[ch]' 'include/*.h')
echo "  CHECKPATCH ${#sources[@]} files ($(basename "$tarball" .tar.xz))"
if ! perl "$cache/scripts/checkpatch.pl" --strict --no-tree --quiet --show-types \
	--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f "${sources[@]}"; then
	fail=1
fi
# SPDX tags are checked by hand: --no-tree checkpatch cannot tell .h
# comment style rules apart for files outside a kernel tree.
for f in "${sources[@]}"; do
	case $f in
	*.c) head -n 1 "$f" | grep -q '^// SPDX-License-Identifier: ' ;;
	*.h) head -n 1 "$f" | grep -q '^/\* SPDX-License-Identifier: .* \*/$' ;;
	esac || { echo "$f:1: missing or misplaced SPDX-License-Identifier"; fail=1; }
done

# sparse and W=1 in one build per kernel: any warning or error fails,
# and so do missing headers.
kernels=$(tools/scripts/kernels.sh) || exit 1
while read -r series kver; do
	echo "  SPARSE+W=1 $kver"
	log=$(mktemp)
	# Its own tree: make check runs this while guests load build/$kver's.
	if ! VRSS_BUILD_OUT=$repo/build/lint/$kver \
		tools/scripts/build-module.sh "$kver" -B W=1 C=2 > "$log" 2>&1; then
		fail=1
	fi
	# Debian's 6.1 headers carry no vmlinux, so no module BTF: harmless.
	if grep -v 'Skipping BTF generation' "$log" | grep -E 'warning|error|:[0-9]+:[0-9]+: ' ; then
		fail=1
	fi
	rm -f "$log"
done <<< "$kernels"

exit $fail
