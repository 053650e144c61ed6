#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module loads and unloads cleanly on this kernel, taints nothing but
# the out-of-tree and unsigned bits, and says what it is in modinfo.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module

ktap_plan 6

taint0=$(vrss_taint_other)
ktap_check "kernel untainted before the test" test "$taint0" -eq 0

ktap_check "vermagic matches the running kernel" \
	sh -c "modinfo -F vermagic '$VRSS_KO' | grep -q '^$(uname -r) '"

ktap_check "insmod vrss.ko" insmod "$VRSS_KO"

ktap_check "vrss listed in /proc/modules, live, unused" \
	grep -Eq '^vrss [0-9]+ 0 - Live ' /proc/modules

ktap_check "rmmod vrss" sh -c 'rmmod vrss && ! grep -q "^vrss " /proc/modules'

ktap_check "no taint beyond out-of-tree and unsigned (was $taint0)" \
	test "$(vrss_taint_other)" -eq "$taint0"

ktap_finish
