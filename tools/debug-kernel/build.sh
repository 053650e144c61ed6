#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make debug-kernel: build linux-source-6.12 with vrss-debug.config (lockdep,
# KASAN, kmemleak, debug objects; only what the guest rig needs, built in)
# into a cache outside the repository, and print the bzImage's path last.
# The cache key is the config fragment, the recipe's version below, the
# source package's version and the compiler: an unchanged config is not
# rebuilt.  Bump recipe when a change here changes the kernel built.
#
#   tools/debug-kernel/build.sh [--print]   (--print: path only, no build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
frag=$here/vrss-debug.config
cache=${VRSS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vrss}/debug-kernel
tarball=/usr/src/linux-source-6.12.tar.xz
jobs=${JOBS:-$(nproc)}

die() { echo "debug-kernel: $*" >&2; exit 1; }
[ -f "$tarball" ] || die "no $tarball (run: make deps)"
srcver=$(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null) || srcver=$(stat -c %Y "$tarball")
recipe=1
key=$( { cat "$frag"; echo "recipe $recipe $srcver"; ${CC:-gcc} --version | head -n 1; } | sha1sum | cut -c1-12)
out=$cache/$key
if [ "${1:-}" = --print ]; then
	[ -f "$out/done" ] || die "not built yet (run: make debug-kernel)"
	echo "$out/bzImage"
	exit 0
fi
if [ -f "$out/done" ]; then
	echo "  DEBUG-KERNEL $(cat "$out/kver") (cached, built in $(cat "$out/build-seconds")s)" >&2
	echo "$out/bzImage"
	exit 0
fi

start=$(date +%s)
mkdir -p "$cache"
src=$cache/src-$srcver
if [ ! -f "$src/Makefile" ]; then
	echo "  UNPACK  $tarball" >&2
	rm -rf "$src" "$src.tmp" && mkdir -p "$src.tmp"
	tar -xJf "$tarball" -C "$src.tmp" --strip-components=1
	mv "$src.tmp" "$src"
fi

rm -rf "$out" && mkdir -p "$out/build"
k() { make -s -C "$src" O="$out/build" "$@"; }
echo "  CONFIG  allnoconfig + ${frag#"$PWD"/}" >&2
k KCONFIG_ALLCONFIG="$frag" allnoconfig >/dev/null
# Kconfig drops what a dependency forbids without a word: every line of the
# fragment must be in the result, or the kernel is not the one we asked for.
missing=0
while read -r line; do
	case $line in
	CONFIG_*=*) grep -qxF "$line" "$out/build/.config" ;;
	"# CONFIG_"*" is not set") grep -qxF "$line" "$out/build/.config" ||
		! grep -q "^${line#\# }" "$out/build/.config" ;;
	*) continue ;;
	esac || { echo "debug-kernel: not in the resulting .config: $line" >&2; missing=1; }
done < "$frag"
[ "$missing" = 0 ] || die "vrss-debug.config asks for options Kconfig refused"

echo "  BUILD   linux-source-6.12 $srcver, $jobs jobs (tens of minutes)" >&2
k -j"$jobs" all >"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log" >&2; die "kernel build failed: $out/build.log"; }
# modules.builtin under lib/modules/<kver>: modprobe of a built-in module
# (veth, 8021q, ...) then succeeds in the guest; tools/vm/run shares it.
k INSTALL_MOD_PATH="$out" modules_install >>"$out/build.log" 2>&1 || die "modules_install failed: $out/build.log"
kver=$(cat "$out/build/include/config/kernel.release")
# Not needed in the guest (vrss.ko is built with KDIR), and absolute paths.
rm -f "$out/lib/modules/$kver/build" "$out/lib/modules/$kver/source"
cp "$out/build/arch/x86/boot/bzImage" "$out/bzImage"
echo "$kver" > "$out/kver"
echo $(( $(date +%s) - start )) > "$out/build-seconds"
: > "$out/done"
echo "  DEBUG-KERNEL $kver built in $(cat "$out/build-seconds")s" >&2
echo "$out/bzImage"
