#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-module.sh KVER [MAKE ARGS...]: build vrss.ko for kernel KVER in its
# own output tree, build/KVER/ (or $VRSS_BUILD_OUT), so builds for several
# kernels, or a lint build beside the modules the guests load, never
# clobber each other.  The tree is a symlink farm of the sources (Kbuild
# builds in M=, and Linux 6.1 has no separate object directory for
# external modules).
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
kver=$1
shift
kdir=${KDIR:-/lib/modules/$kver/build}
[ -d "$kdir" ] || { echo "build-module.sh: no headers for $kver in $kdir" >&2; exit 1; }
out=${VRSS_BUILD_OUT:-$repo/build/$kver}
mkdir -p "$out"
# Relink from scratch: a source that was removed must not linger.
find "$out" -type l -delete
(cd "$repo" && find Kbuild drivers include -type f \( -name '*.[ch]' -o -name Kbuild \) ! -name '*.mod.c') |
while read -r f; do
	mkdir -p "$out/$(dirname "$f")"
	ln -s "$repo/$f" "$out/$f"
done
exec make -s -j"$(nproc)" -C "$kdir" M="$out" "$@" modules
