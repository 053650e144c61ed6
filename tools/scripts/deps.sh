#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deps: install the Debian packages vrss needs, only those missing.
# Everything comes from the Debian archive.
set -eu

pkgs=(
	# building the module for both Debian kernels, and lint
	gcc make bc kmod libelf-dev sparse perl
	linux-headers-amd64 linux-headers-6.12-amd64
	linux-source-6.12
	# the guest rig: both kernels, QEMU TCG, a static busybox initramfs
	linux-image-amd64 linux-image-6.12-amd64
	qemu-system-x86 busybox-static cpio xz-utils zstd lz4 procps
	# Debian's cloud kernels (no 9p: the rig shares over virtio-fs)
	linux-image-cloud-amd64 linux-image-6.12-cloud-amd64
	linux-headers-cloud-amd64 linux-headers-6.12-cloud-amd64
	# what the selftests and benchmarks drive inside the guest
	iproute2 iputils-ping ethtool iperf3 python3
	# the kernel's drivers/net/ping.py (its TCP case), in the guest
	socat
	# examples.sh: the boot examples as a guest runs them (ifupdown with
	# dhclient, systemd-networkd and systemd-analyze)
	ifupdown isc-dhcp-client systemd
	# make bench and make demo: the receive-bound guest's firewall, and
	# request/response latency
	nftables sockperf
	# host unit tests
	libcmocka-dev pkg-config
	# docs (rst2html), DKMS packaging check, netlink statistics (YNL)
	python3-docutils dkms openssl python3-yaml
	# make deb: the Debian package (dh-dkms) and its lint
	debhelper dh-dkms lintian fakeroot
	# Toeplitz instruction counts (make bench)
	valgrind
	# charts
	gnuplot-nox
	# the debug kernel (make debug-kernel) and the fuzz target (make fuzz)
	flex bison libssl-dev clang libclang-rt-dev
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0

echo "deps: installing ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to apt-get install these (or install them yourself)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
