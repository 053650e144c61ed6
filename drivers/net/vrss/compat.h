/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels vrss builds for (Debian's 6.1 and 6.12).
 * Every version or feature #if of the module lives here, nowhere else.
 * The VRSS_HAVE_* macros come from probes of the kernel headers in Kbuild,
 * which also catch features Debian backported into an older series.
 */
#ifndef _VRSS_COMPAT_H
#define _VRSS_COMPAT_H

#include <linux/ethtool.h>
#include <linux/netdevice.h>

#include "vrss.h"

/* 6.12 made lockless transmit a device flag instead of a feature bit. */
static inline void vrss_compat_set_lltx(struct net_device *dev)
{
#ifdef VRSS_HAVE_DEV_LLTX
	dev->lltx = true;
#else
	dev->features |= NETIF_F_LLTX;
#endif
}

/*
 * ethtool get/set_rxfh took separate arguments until 6.8, a struct
 * ethtool_rxfh_param (and an extack) since.  Both forward to
 * vrss_rxfh_get/set() in ethtool.c.
 */
#ifdef VRSS_HAVE_RXFH_PARAM
static inline int vrss_compat_get_rxfh(struct net_device *dev,
				       struct ethtool_rxfh_param *p)
{
	return vrss_rxfh_get(dev, p->indir, p->key, &p->hfunc);
}

static inline int vrss_compat_set_rxfh(struct net_device *dev,
				       struct ethtool_rxfh_param *p,
				       struct netlink_ext_ack *extack)
{
	return vrss_rxfh_set(dev, p->indir, p->key, p->hfunc, extack);
}
#else
static inline int vrss_compat_get_rxfh(struct net_device *dev, u32 *indir,
				       u8 *key, u8 *hfunc)
{
	return vrss_rxfh_get(dev, indir, key, hfunc);
}

static inline int vrss_compat_set_rxfh(struct net_device *dev,
				       const u32 *indir, const u8 *key,
				       const u8 hfunc)
{
	return vrss_rxfh_set(dev, indir, key, hfunc, NULL);
}
#endif

#endif /* _VRSS_COMPAT_H */
