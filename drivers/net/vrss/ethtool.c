// SPDX-License-Identifier: GPL-2.0
/*
 * ethtool: driver info, channels (the queues in use) and statistics.
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>

#include "vrss.h"

static void vrss_get_drvinfo(struct net_device *dev,
			     struct ethtool_drvinfo *info)
{
	struct vrss_dev *vd = netdev_priv(dev);

	strscpy(info->driver, VRSS_DRV_NAME, sizeof(info->driver));
	strscpy(info->version, VRSS_DRV_VERSION, sizeof(info->version));
	strscpy(info->bus_info, vd->lower->name, sizeof(info->bus_info));
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
		const struct vrss_rss *rss = rtnl_dereference(vd->rss);

		if (vrss_indir_max(rss->indir) >= n)
			return -EINVAL;
	}
	err = netif_set_real_num_rx_queues(dev, n);
	if (err)
		return err;
	vrss_rss_channels_changed(vd);
	return 0;
}

static const char vrss_queue_stat_names[][ETH_GSTRING_LEN] = {
	"packets", "bytes", "drops", "cpu",
};

static const char vrss_dev_stat_names[][ETH_GSTRING_LEN] = {
	"rx_nohash", "rx_dropped_down",
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
	unsigned int i, start;

	for (i = 0; i < dev->num_rx_queues; i++) {
		struct vrss_queue *q = &vd->queues[i];

		do {
			start = u64_stats_fetch_begin(&q->syncp);
			data[0] = u64_stats_read(&q->packets);
			data[1] = u64_stats_read(&q->bytes);
		} while (u64_stats_fetch_retry(&q->syncp, start));
		data[2] = atomic64_read(&q->drops);
		/* Where the poll last ran, or the queue's CPU before any. */
		data[3] = READ_ONCE(q->last_cpu) >= 0 ? q->last_cpu : q->cpu;
		data += VRSS_QUEUE_STATS;
	}
	data[0] = atomic64_read(&vd->rx_nohash);
	data[1] = atomic64_read(&vd->rx_dropped_down);
}

const struct ethtool_ops vrss_ethtool_ops = {
	.get_drvinfo		= vrss_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_channels		= vrss_get_channels,
	.set_channels		= vrss_set_channels,
	.get_sset_count		= vrss_get_sset_count,
	.get_strings		= vrss_get_strings,
	.get_ethtool_stats	= vrss_get_ethtool_stats,
};
