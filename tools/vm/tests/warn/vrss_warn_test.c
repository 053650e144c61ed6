// SPDX-License-Identifier: GPL-2.0
/*
 * Rig self-test only: a module whose init WARNs, to prove that tools/vm/run
 * turns a guest WARN into a failed run.
 */
#include <linux/module.h>
#include <linux/bug.h>

static int __init vrss_warn_test_init(void)
{
	WARN(1, "vrss_warn_test: deliberate WARN for the rig self-test\n");
	return 0;
}

static void __exit vrss_warn_test_exit(void)
{
}

module_init(vrss_warn_test_init);
module_exit(vrss_warn_test_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("tools/vm/run self-test: WARN on load");
