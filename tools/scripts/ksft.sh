#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's kselftest machinery, from Debian's linux-source-6.12, with
# the vrss selftests in it: build/ksft/ becomes a kernel-tree fragment
# (tools/testing/selftests/{Makefile,lib.mk,kselftest/} and what their
# includes need) in which tools/testing/selftests/drivers/net/vrss/ holds
# links to this repository's selftest files, as if vrss were in the tree:
#
#   make -C build/ksft/tools/testing/selftests TARGETS=drivers/net/vrss run_tests
#
# runs them with the kernel's runner (KTAP, the per-test timeout of
# `settings`).  The kernel's own driver tests (drivers/net/{ping,queues,
# stats}.py and their Python libraries, tools/net/ynl) come along for
# tools/scripts/ksft-drv.sh.  Extracted once into a cache outside the
# repository, then copied under build/, which the guest sees.  Nothing of
# the kernel's is committed here.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${VRSS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vrss}/ksft
tarball=/usr/src/linux-source-6.12.tar.xz
[ -f "$tarball" ] || { echo "ksft: no $tarball (run: make deps)" >&2; exit 1; }
top=linux-source-6.12
st=$top/tools/testing/selftests
paths=(
	$st/Makefile $st/lib.mk $st/kselftest $st/kselftest.h $st/kselftest_harness.h
	$top/scripts/subarch.include
	$st/drivers/net/Makefile $st/drivers/net/lib $st/drivers/net/ping.py
	$st/drivers/net/queues.py $st/drivers/net/stats.py
	$st/net/lib $st/net/lib.sh $st/net/net_helper.sh
	$top/tools/net/ynl/lib $top/tools/net/ynl/cli.py
	$top/Documentation/netlink/specs
)
stamp="$(stat -c '%n %Y' "$tarball") ${paths[*]}"
if [ "$(cat "$cache/stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$cache" && mkdir -p "$cache"
	tar -xJf "$tarball" -C "$cache" --strip-components=1 "${paths[@]}"
	echo "$stamp" > "$cache/stamp"
fi
out=$repo/build/ksft
rm -rf "$out"
mkdir -p "$out"
cp -a "$cache/." "$out/"
rm -f "$out/stamp"
dir=$out/tools/testing/selftests/drivers/net/vrss
mkdir -p "$dir"
# The rig's remote end for the kernel's drivers/net tests on virtio-net.
ln -s "$repo/tools/vm/remote_vmhost.py" "$out/tools/testing/selftests/drivers/net/lib/py/"
# Sources only: lib.mk builds TEST_GEN_FILES (vrss_traffic) here itself.
git -C "$repo" ls-files -co --exclude-standard -- selftests/drivers/net/vrss |
	while read -r f; do
		ln -s "$repo/$f" "$dir/${f##*/}"
	done
