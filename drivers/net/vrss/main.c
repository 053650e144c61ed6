// SPDX-License-Identifier: GPL-2.0
/*
 * vrss: load-gated virtual receive side scaling for KVM guests.
 *
 * This file only sequences module init and exit; each concern lives in its
 * own file.
 */
#include <linux/module.h>
#include <net/rtnetlink.h>

#include "vrss.h"

static int __init vrss_init(void)
{
	int err;

	err = vrss_queues_init();
	if (err)
		return err;
	err = vrss_netdev_init();
	if (err)
		goto err_queues;
	return 0;

err_queues:
	vrss_queues_exit();
	return err;
}

static void __exit vrss_exit(void)
{
	vrss_netdev_exit();
	vrss_queues_exit();
}

module_init(vrss_init);
module_exit(vrss_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("The vrss authors");
MODULE_DESCRIPTION("Load-gated virtual RSS (Hyper-V style vRSS) for KVM guests");
MODULE_VERSION(VRSS_DRV_VERSION);
MODULE_ALIAS_RTNL_LINK(VRSS_DRV_NAME);
