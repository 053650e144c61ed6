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
#ifdef VRSS_HAVE_NETDEV_RX_QUEUE_H
#include <net/netdev_rx_queue.h>
#endif

/* 6.12 made lockless transmit a device flag instead of a feature bit. */
static inline void vrss_compat_set_lltx(struct net_device *dev)
{
#ifdef VRSS_HAVE_DEV_LLTX
	dev->lltx = true;
#else
	dev->features |= NETIF_F_LLTX;
#endif
}

/* Whether RPS or RFS would move frames @dev receives on its queue @i. */
static inline bool vrss_compat_rps_set(struct net_device *dev, unsigned int i)
{
#ifdef CONFIG_RPS
	struct netdev_rx_queue *rxq = __netif_get_rx_queue(dev, i);

	return rcu_access_pointer(rxq->rps_map) ||
	       rcu_access_pointer(rxq->rps_flow_table);
#else
	return false;
#endif
}

/*
 * ethtool get/set_rxfh took separate arguments until 6.8, a struct
 * ethtool_rxfh_param (and an extack) since.  VRSS_RXFH_ADAPTERS(get, set)
 * defines get_compat() and set_compat(), with the kernel's signatures, in
 * the file that uses it, around that file's own
 *
 *	int get(struct net_device *dev, u32 *indir, u8 *key, u8 *hfunc);
 *	int set(struct net_device *dev, const u32 *indir, const u8 *key,
 *		u8 hfunc, struct netlink_ext_ack *extack);
 *
 * so that this header calls nothing of the driver's.
 */
#ifdef VRSS_HAVE_RXFH_PARAM
#define VRSS_RXFH_ADAPTERS(get, set)					\
static int get##_compat(struct net_device *dev,			\
			struct ethtool_rxfh_param *p)			\
{									\
	return get(dev, p->indir, p->key, &p->hfunc);			\
}									\
static int set##_compat(struct net_device *dev,			\
			struct ethtool_rxfh_param *p,			\
			struct netlink_ext_ack *extack)			\
{									\
	return set(dev, p->indir, p->key, p->hfunc, extack);		\
}
#else
#define VRSS_RXFH_ADAPTERS(get, set)					\
static int get##_compat(struct net_device *dev, u32 *indir, u8 *key,	\
			u8 *hfunc)					\
{									\
	return get(dev, indir, key, hfunc);				\
}									\
static int set##_compat(struct net_device *dev, const u32 *indir,	\
			const u8 *key, const u8 hfunc)			\
{									\
	return set(dev, indir, key, hfunc, NULL);			\
}
#endif

/*
 * Another device's RSS table and key, through its own ethtool ops, under
 * RTNL as the ethtool core calls them: a NULL key leaves it unread or
 * unchanged, and a write leaves the hash function as it is.
 */
static inline int vrss_compat_get_rxfh(struct net_device *dev, u32 *indir,
				       u32 indir_size, u8 *key, u32 key_size)
{
#ifdef VRSS_HAVE_RXFH_PARAM
	struct ethtool_rxfh_param p = {
		.indir_size = indir_size,
		.indir = indir,
		.key_size = key_size,
		.key = key,
	};

	return dev->ethtool_ops->get_rxfh(dev, &p);
#else
	return dev->ethtool_ops->get_rxfh(dev, indir, key, NULL);
#endif
}

static inline int vrss_compat_set_rxfh(struct net_device *dev, u32 *indir,
				       u32 indir_size, u8 *key, u32 key_size)
{
#ifdef VRSS_HAVE_RXFH_PARAM
	struct ethtool_rxfh_param p = {
		.hfunc = ETH_RSS_HASH_NO_CHANGE,
		.indir_size = indir_size,
		.indir = indir,
		.key_size = key ? key_size : 0,
		.key = key,
		.input_xfrm = RXH_XFRM_NO_CHANGE,
	};

	return dev->ethtool_ops->set_rxfh(dev, &p, NULL);
#else
	return dev->ethtool_ops->set_rxfh(dev, indir, key, ETH_RSS_HASH_NO_CHANGE);
#endif
}

/*
 * 6.9+: per-queue statistics over netdev netlink (qstats-get).
 * VRSS_STAT_OPS(name, rx, tx, base) defines the struct netdev_stat_ops
 * `name` in the file that uses it, around that file's own
 *
 *	void rx(struct net_device *dev, int i, u64 *packets, u64 *bytes);
 *	void tx(struct net_device *dev, int i, u64 *packets, u64 *bytes);
 *	void base(struct net_device *dev, u64 *rx_packets, u64 *rx_bytes,
 *		  u64 *tx_packets, u64 *tx_bytes);
 *
 * and vrss_compat_set_stat_ops(dev, &name) installs it; before 6.9 there
 * is nothing to install.
 */
#ifdef VRSS_HAVE_STAT_OPS
#include <net/netdev_queues.h>

#define VRSS_STAT_OPS(name, rx, tx, base)				\
static void name##_rx(struct net_device *dev, int i,			\
		      struct netdev_queue_stats_rx *s)			\
{									\
	rx(dev, i, &s->packets, &s->bytes);				\
}									\
static void name##_tx(struct net_device *dev, int i,			\
		      struct netdev_queue_stats_tx *s)			\
{									\
	tx(dev, i, &s->packets, &s->bytes);				\
}									\
static void name##_base(struct net_device *dev,			\
			struct netdev_queue_stats_rx *r,		\
			struct netdev_queue_stats_tx *t)		\
{									\
	base(dev, &r->packets, &r->bytes, &t->packets, &t->bytes);	\
}									\
static const struct netdev_stat_ops name = {				\
	.get_queue_stats_rx	= name##_rx,				\
	.get_queue_stats_tx	= name##_tx,				\
	.get_base_stats		= name##_base,				\
}

static inline void vrss_compat_set_stat_ops(struct net_device *dev,
					    const struct netdev_stat_ops *ops)
{
	dev->stat_ops = ops;
}
#else
/* Nothing to install, but the same signatures, checked. */
struct vrss_compat_stat_ops {
	void (*rx)(struct net_device *dev, int i, u64 *packets, u64 *bytes);
	void (*tx)(struct net_device *dev, int i, u64 *packets, u64 *bytes);
	void (*base)(struct net_device *dev, u64 *rx_packets, u64 *rx_bytes,
		     u64 *tx_packets, u64 *tx_bytes);
};

#define VRSS_STAT_OPS(name, rx_fn, tx_fn, base_fn)			\
static const struct vrss_compat_stat_ops name = {			\
	.rx = rx_fn, .tx = tx_fn, .base = base_fn,			\
}

static inline void
vrss_compat_set_stat_ops(struct net_device *dev,
			 const struct vrss_compat_stat_ops *ops)
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
