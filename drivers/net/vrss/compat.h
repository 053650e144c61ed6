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

/*
 * 6.12: per-queue statistics over netdev netlink (qstats-get).  Queues in
 * use report their packets and bytes; the base stats hold what the
 * others counted, so that the sums equal ip -s link's totals.
 */
#ifdef VRSS_HAVE_STAT_OPS
#include <net/netdev_queues.h>

static inline void vrss_compat_queue_stats_rx(struct net_device *dev, int i,
					      struct netdev_queue_stats_rx *rx)
{
	struct vrss_dev *vd = netdev_priv(dev);

	vrss_queue_read_stats(vd, i, &rx->packets, &rx->bytes);
}

static inline void vrss_compat_queue_stats_tx(struct net_device *dev, int i,
					      struct netdev_queue_stats_tx *tx)
{
	vrss_tx_read_stats(netdev_priv(dev), &tx->packets, &tx->bytes);
}

static inline void vrss_compat_base_stats(struct net_device *dev,
					  struct netdev_queue_stats_rx *rx,
					  struct netdev_queue_stats_tx *tx)
{
	struct vrss_dev *vd = netdev_priv(dev);
	unsigned int i;
	u64 packets, bytes;

	rx->packets = 0;
	rx->bytes = 0;
	for (i = dev->real_num_rx_queues; i < dev->num_rx_queues; i++) {
		vrss_queue_read_stats(vd, i, &packets, &bytes);
		rx->packets += packets;
		rx->bytes += bytes;
	}
	tx->packets = 0;
	tx->bytes = 0;
}

static inline void vrss_compat_set_stat_ops(struct net_device *dev)
{
	static const struct netdev_stat_ops ops = {
		.get_queue_stats_rx	= vrss_compat_queue_stats_rx,
		.get_queue_stats_tx	= vrss_compat_queue_stats_tx,
		.get_base_stats		= vrss_compat_base_stats,
	};

	dev->stat_ops = &ops;
}
#else
static inline void vrss_compat_set_stat_ops(struct net_device *dev)
{
}
#endif

/*
 * 6.12: link each receive queue in use to its NAPI context (netdev
 * netlink queue-get), under RTNL; NULL unlinks.
 */
static inline void vrss_compat_queue_set_napi(struct net_device *dev,
					      unsigned int i,
					      struct napi_struct *napi)
{
#ifdef VRSS_HAVE_QUEUE_SET_NAPI
	netif_queue_set_napi(dev, i, NETDEV_QUEUE_TYPE_RX, napi);
#endif
}

#endif /* _VRSS_COMPAT_H */
