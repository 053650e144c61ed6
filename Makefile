# SPDX-License-Identifier: GPL-2.0
#
# vrss: `make` builds drivers/net/vrss/vrss.ko for the running kernel,
# `make KDIR=<dir>` for another one.  README lists the other targets.

KDIR ?= /lib/modules/$(shell uname -r)/build
S := tools/scripts

.PHONY: all modules clean modules-all deps lint unit selftests rig-tests check demo tools \
	install dkms-install deb docs bench fuzz debug-kernel check-debug check-full ksft mutants

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# modules_install into /lib/modules/<kver>/extra (under INSTALL_MOD_PATH if
# set), then depmod: modprobe vrss.
KVER = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h)
install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra modules_install
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KVER)
	install -D -m 0755 tools/vrss-attach $(INSTALL_MOD_PATH)/usr/local/sbin/vrss-attach
	ln -sf vrss-attach $(INSTALL_MOD_PATH)/usr/local/sbin/vrss-detach
	install -D -m 0755 tools/vrss-status $(INSTALL_MOD_PATH)/usr/local/sbin/vrss-status

# DKMS: this tree rebuilt for every installed kernel with headers.
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
dkms-install:
	dkms add $(CURDIR) || dkms status vrss/$(VERSION) | grep -q .
	dkms install vrss/$(VERSION) --all 2>/dev/null || \
		for k in /lib/modules/*/build; do \
			k=$${k%/build}; dkms install vrss/$(VERSION) -k $${k##*/} || exit 1; \
		done

# build/deb/vrss-dkms_VERSION_all.deb, with Debian's dh-dkms (debian/).
deb:
	@$(S)/deb.sh

# Documentation/ renders cleanly (docutils, warnings are errors).
docs:
	@$(S)/docs.sh

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean || true
	rm -rf build
	[ ! -d tests/unit ] || $(MAKE) -C tests/unit clean

# One output tree per installed Debian kernel: build/<kver>/ (the cloud
# flavours' too, if their headers are installed).
modules-all:
	@kernels=$$($(S)/kernels.sh) || exit 1; \
	cloud=$$($(S)/kernels.sh --cloud 2>/dev/null) || cloud=; \
	{ echo "$$kernels"; [ -z "$$cloud" ] || echo "$$cloud"; } | while read -r series kver; do \
		echo "  BUILD   vrss.ko for $$kver"; \
		$(S)/build-module.sh $$kver || exit 1; \
	done

deps:
	@$(S)/deps.sh

lint:
	@$(S)/lint.sh

unit:
	@$(MAKE) -s -C tests/unit run
	@python3 tools/insn/test_profile.py

# libFuzzer over the parser, hash, table and policy: make fuzz FUZZ_SECONDS=N
fuzz:
	@$(MAKE) -s -C tests/fuzz run

# The debug kernel (lockdep, KASAN, kmemleak), built once into ~/.cache/vrss,
# and the selftests plus the stress suite on it.
debug-kernel:
	@tools/debug-kernel/build.sh >/dev/null

check-debug:
	@tools/debug-kernel/check.sh

# The selftests in a kselftest tree of the kernel's (tools/scripts/ksft.sh:
# Debian's linux-source-6.12 with drivers/net/vrss linked in), built here.
KSFT := build/ksft/tools/testing/selftests
ksft:
	@$(S)/ksft.sh
	@$(MAKE) -s -C $(KSFT) TARGETS=drivers/net/vrss all

# Guest selftests on one kernel series: make selftests KERNEL=6.1
KERNEL ?= 6.12
selftests: modules-all tools ksft
	@$(S)/ynl.sh
	tools/vm/run --kernel $(KERNEL) --timeout 1800 -- \
		$(S)/ksft-run.sh

rig-tests:
	@tools/vm/tests/run_tests.sh

check:
	@$(S)/check.sh

# make check and more of the same promises: the steering tests with 2 and
# 4 vCPUs on both kernels, every full-ring change in each virtio.sh,
# cost.sh on the 2- and 1-queue NIC of both kernels and 5 rounds,
# attach.sh and examples.sh on every kernel, every selftest on the cloud
# kernels, longer stress and fuzzing.
check-full:
	@VRSS_CHECK_FULL=1 $(S)/check.sh

# Mutation testing, not in make check: each mutant of
# tools/mutants/mutants.txt breaks one promise of the module's in a scratch copy of
# the module, built and loaded in a guest that runs the selftests that
# should catch it; prints which survived.  make mutants MUTANTS="id ...":
# only those.  The guests use this tree's selftests, ksft tree and tools.
mutants: tools ksft
	@$(S)/ynl.sh
	@tools/mutants/run.sh $(MUTANTS)

# Host-built tools the guest runs (the repository is shared with it).
tools: build/tools/vrss-ttcp selftests/drivers/net/vrss/vrss_traffic \
	build/tools/vrss-insn.so build/tools/vrss-insn

# The selftests' traffic helper, for make demo and make bench (the
# selftests build their own in the kselftest tree).
selftests/drivers/net/vrss/vrss_traffic: selftests/drivers/net/vrss/vrss_traffic.c
	$(CC) -O2 -g -Wall -Wextra -Werror -o $@ $<

build/tools/vrss-ttcp: tools/ttcp/vrss-ttcp.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -pthread -o $@ $<

# The instruction meter: a QEMU TCG plugin (tools/vm/run --count-insns)
# and the guest's side of it (marks).
build/tools/vrss-insn.so: tools/insn/insn.c tools/insn/mark.h tools/insn/qemu-plugin-api.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -pthread -o $@ $<

build/tools/vrss-insn: tools/insn/vrss-insn.c tools/insn/mark.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -o $@ $<

# The vRSS off/on experiment in a guest: a table and build/demo/demo.png.
demo:
	@tools/demo/demo.sh

# vrss against the plain device and RPS, 2 and 4 vCPUs: bench/results.md.
bench:
	@tools/bench/bench.sh
