// SPDX-License-Identifier: GPL-2.0
/*
 * ethtool: driver info, channels (the queues in use), the RSS key, table
 * and hashed fields, and statistics.
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>

#include "compat.h"
#include "device.h"
#include "gate.h"
#include "hashing.h"
#include "vrss.h"

static void vrss_get_drvinfo(struct net_device *dev,
			     struct ethtool_drvinfo *info)
{
	struct vrss_dev *vd = netdev_priv(dev);

	strscpy(info->driver, VRSS_DRV_NAME, sizeof(info->driver));
	strscpy(info->version, VRSS_DRV_VERSION, sizeof(info->version));
	strscpy(info->bus_info, vd->lower->name, sizeof(info->bus_info));
}

/* Speed and duplex are the lower's, as on macvlan and bonding. */
static int vrss_get_link_ksettings(struct net_device *dev,
				   struct ethtool_link_ksettings *cmd)
{
	struct vrss_dev *vd = netdev_priv(dev);

	return __ethtool_get_link_ksettings(vd->lower, cmd);
}

/*
 * Receive queues are "rx" channels; the one transmit queue is a "tx"
 * channel.  `-L combined N` is taken as `-L rx N` for users used to
 * combined queues, so it is reported as available too.
 */
static void vrss_get_channels(struct net_device *dev,
			      struct ethtool_channels *ch)
{
	ch->max_rx = dev->num_rx_queues;
	ch->max_combined = dev->num_rx_queues;
	ch->max_tx = 1;
	ch->rx_count = dev->real_num_rx_queues;
	ch->tx_count = 1;
}

static int vrss_set_channels(struct net_device *dev,
			     struct ethtool_channels *ch)
{
	struct vrss_dev *vd = netdev_priv(dev);
	unsigned int cur = dev->real_num_rx_queues, n;
	int err;

	if (ch->other_count || ch->tx_count > 1)
		return -EINVAL;
	if (ch->combined_count) {
		/* ethtool sends the unchanged rx count along: that one is fine. */
		if (ch->rx_count && ch->rx_count != cur)
			return -EINVAL;
		n = ch->combined_count;
	} else {
		n = ch->rx_count;
	}
	if (!n || n > dev->num_rx_queues)
		return -EINVAL;
	if (n == cur)
		return 0;

	/* A user-set table must still fit; the default one follows. */
	if (netif_is_rxfh_configured(dev)) {
		const struct vrss_rss *rss = rtnl_dereference(vd->rss.user);

		if (vrss_indir_max(rss->indir) >= n)
			return -EINVAL;
	}
	err = netif_set_real_num_rx_queues(dev, n);
	if (err)
		return err;
	if (netif_running(dev))
		vrss_queues_link_napi(vd, true);
	vrss_rss_channels_changed(vd);
	vrss_gate_reconfig(vd);
	return 0;
}

static u32 vrss_get_rxfh_key_size(struct net_device *dev)
{
	return VRSS_RSS_KEY_SIZE;
}

static u32 vrss_get_rxfh_indir_size(struct net_device *dev)
{
	return VRSS_INDIR_SIZE;
}

static int vrss_rxfh_get(struct net_device *dev, u32 *indir, u8 *key,
			 u8 *hfunc)
{
	struct vrss_dev *vd = netdev_priv(dev);
	const struct vrss_rss *rss = rtnl_dereference(vd->rss.user);

	if (hfunc)
		*hfunc = ETH_RSS_HASH_TOP;
	if (indir)
		memcpy(indir, rss->indir, sizeof(rss->indir));
	if (key)
		memcpy(key, rss->key, sizeof(rss->key));
	return 0;
}

/* Toeplitz only; every entry must name a queue in use. */
static int vrss_rxfh_set(struct net_device *dev, const u32 *indir,
			 const u8 *key, u8 hfunc,
			 struct netlink_ext_ack *extack)
{
	struct vrss_dev *vd = netdev_priv(dev);
	struct vrss_hashing_change change = { indir, key, -1 };

	if (hfunc != ETH_RSS_HASH_NO_CHANGE && hfunc != ETH_RSS_HASH_TOP) {
		NL_SET_ERR_MSG(extack, "vrss hashes with Toeplitz only");
		return -EOPNOTSUPP;
	}
	if (indir && vrss_indir_max(indir) >= dev->real_num_rx_queues) {
		NL_SET_ERR_MSG(extack, "indirection table names a queue not in use");
		return -EINVAL;
	}
	if (!indir && !key)
		return 0;
	/* A new key re-maps the flows: it hashes once their buckets drained. */
	return vrss_hashing_change(vd, &change);
}

/* The kernel's get/set_rxfh (compat.h: their arguments changed in 6.8). */
VRSS_RXFH_ADAPTERS(vrss_rxfh_get, vrss_rxfh_set)

static int vrss_flow_of(u32 flow_type)
{
	switch (flow_type) {
	case TCP_V4_FLOW:
		return VRSS_FLOW_TCP4;
	case UDP_V4_FLOW:
		return VRSS_FLOW_UDP4;
	case TCP_V6_FLOW:
		return VRSS_FLOW_TCP6;
	case UDP_V6_FLOW:
		return VRSS_FLOW_UDP6;
	default:
		return -1;
	}
}

#define VRSS_RXH_SD	(RXH_IP_SRC | RXH_IP_DST)
#define VRSS_RXH_SDFN	(VRSS_RXH_SD | RXH_L4_B_0_1 | RXH_L4_B_2_3)

static int vrss_get_rxfh_fields(struct vrss_dev *vd, struct ethtool_rxnfc *nfc)
{
	int flow = vrss_flow_of(nfc->flow_type);

	if (flow >= 0) {
		nfc->data = READ_ONCE(vd->rss.ports) & BIT(flow) ? VRSS_RXH_SDFN : VRSS_RXH_SD;
		return 0;
	}
	/* Every other IP flow type hashes the addresses only. */
	switch (nfc->flow_type) {
	case SCTP_V4_FLOW:
	case AH_ESP_V4_FLOW:
	case AH_V4_FLOW:
	case ESP_V4_FLOW:
	case IPV4_FLOW:
	case SCTP_V6_FLOW:
	case AH_ESP_V6_FLOW:
	case AH_V6_FLOW:
	case ESP_V6_FLOW:
	case IPV6_FLOW:
		nfc->data = VRSS_RXH_SD;
		return 0;
	default:
		nfc->data = 0;
		return -EINVAL;
	}
}

static int vrss_get_rxnfc(struct net_device *dev, struct ethtool_rxnfc *nfc,
			  u32 *rule_locs)
{
	switch (nfc->cmd) {
	case ETHTOOL_GRXRINGS:
		nfc->data = dev->real_num_rx_queues;
		return 0;
	case ETHTOOL_GRXFH:
		return vrss_get_rxfh_fields(netdev_priv(dev), nfc);
	default:
		return -EOPNOTSUPP;
	}
}

/* rx-flow-hash tcp4|udp4|tcp6|udp6 sd|sdfn; anything else is refused. */
static int vrss_set_rxnfc(struct net_device *dev, struct ethtool_rxnfc *nfc)
{
	struct vrss_dev *vd = netdev_priv(dev);
	struct vrss_hashing_change change = { NULL, NULL, -1 };
	unsigned int ports;
	int flow;

	if (nfc->cmd != ETHTOOL_SRXFH)
		return -EOPNOTSUPP;
	flow = vrss_flow_of(nfc->flow_type);
	if (flow < 0 || (nfc->data != VRSS_RXH_SD && nfc->data != VRSS_RXH_SDFN))
		return -EINVAL;
	if (nfc->data == VRSS_RXH_SDFN)
		ports = vd->rss.ports | BIT(flow);
	else
		ports = vd->rss.ports & ~BIT(flow);
	if (ports == vd->rss.ports)
		return 0;
	/* Other fields re-map the flows: they hash once their buckets drained. */
	change.ports = ports;
	return vrss_hashing_change(vd, &change);
}

static void vrss_get_ringparam(struct net_device *dev,
			       struct ethtool_ringparam *ring,
			       struct kernel_ethtool_ringparam *kring,
			       struct netlink_ext_ack *extack)
{
	struct vrss_dev *vd = netdev_priv(dev);

	ring->rx_max_pending = VRSS_RING_MAX;
	ring->rx_pending = vd->ring_size;
}

static int vrss_set_ringparam(struct net_device *dev,
			      struct ethtool_ringparam *ring,
			      struct kernel_ethtool_ringparam *kring,
			      struct netlink_ext_ack *extack)
{
	struct vrss_dev *vd = netdev_priv(dev);

	if (ring->rx_pending == vd->ring_size)
		return 0;
	if (!ring->rx_pending) {
		NL_SET_ERR_MSG(extack, "rx ring size must be at least 1");
		return -EINVAL;
	}
	/* The rings are drained without a lock by their NAPI contexts. */
	if (netif_running(dev)) {
		NL_SET_ERR_MSG(extack, "set the rx ring size while the device is down");
		return -EBUSY;
	}
	return vrss_queues_resize(vd, ring->rx_pending);
}

static const char vrss_queue_stat_names[][ETH_GSTRING_LEN] = {
	"packets", "bytes", "drops", "ipis",
};

static const char vrss_dev_stat_names[][ETH_GSTRING_LEN] = {
	"rx_nohash", "rx_dropped_down", "rx_held_for_order", "bucket_moves",
	"spread_events", "contract_events", "rebalance_events", "rebalance_buckets",
	"device_tables", "device_table_errors", "device_late_frames", "spread_ms",
};

#define VRSS_QUEUE_STATS	ARRAY_SIZE(vrss_queue_stat_names)
#define VRSS_DEV_STATS		ARRAY_SIZE(vrss_dev_stat_names)

static int vrss_get_sset_count(struct net_device *dev, int sset)
{
	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return dev->num_rx_queues * VRSS_QUEUE_STATS + VRSS_DEV_STATS;
}

static void vrss_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	unsigned int i, j;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < dev->num_rx_queues; i++)
		for (j = 0; j < VRSS_QUEUE_STATS; j++)
			ethtool_sprintf(&data, "rx_queue_%u_%s", i,
					vrss_queue_stat_names[j]);
	memcpy(data, vrss_dev_stat_names, sizeof(vrss_dev_stat_names));
}

static void vrss_get_ethtool_stats(struct net_device *dev,
				   struct ethtool_stats *stats, u64 *data)
{
	struct vrss_dev *vd = netdev_priv(dev);
	unsigned int i;

	for (i = 0; i < dev->num_rx_queues; i++) {
		struct vrss_queue *q = &vd->queues[i];

		vrss_queue_read_stats(vd, i, &data[0], &data[1]);
		data[2] = atomic64_read(&q->drops);
		data[3] = atomic64_read(&q->ipis);
		data += VRSS_QUEUE_STATS;
	}
	data[0] = vrss_rx_nohash(vd);
	data[1] = atomic64_read(&vd->rx_dropped_down);
	data[2] = atomic64_read(&vd->mv.held);
	data[3] = atomic64_read(&vd->mv.moves);
	data[4] = atomic64_read(&vd->gate.spread_events);
	data[5] = atomic64_read(&vd->gate.contract_events);
	data[6] = atomic64_read(&vd->gate.rebalance_events);
	data[7] = atomic64_read(&vd->gate.rebalance_buckets);
	data[8] = atomic64_read(&vd->dm.commits);
	data[9] = atomic64_read(&vd->dm.commit_errors);
	data[10] = atomic64_read(&vd->dm.late);
	data[11] = vrss_rss_spread_ms(vd);
}

const struct ethtool_ops vrss_ethtool_ops = {
	.get_drvinfo		= vrss_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_link_ksettings	= vrss_get_link_ksettings,
	.get_ringparam		= vrss_get_ringparam,
	.set_ringparam		= vrss_set_ringparam,
	.get_channels		= vrss_get_channels,
	.set_channels		= vrss_set_channels,
	.get_sset_count		= vrss_get_sset_count,
	.get_strings		= vrss_get_strings,
	.get_ethtool_stats	= vrss_get_ethtool_stats,
	.get_rxfh_key_size	= vrss_get_rxfh_key_size,
	.get_rxfh_indir_size	= vrss_get_rxfh_indir_size,
	.get_rxfh		= vrss_rxfh_get_compat,
	.set_rxfh		= vrss_rxfh_set_compat,
	.get_rxnfc		= vrss_get_rxnfc,
	.set_rxnfc		= vrss_set_rxnfc,
};
