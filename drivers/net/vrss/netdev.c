// SPDX-License-Identifier: GPL-2.0
/*
 * The vrss link type: a device stacked on an Ethernet lower device, like
 * macvlan in passthru mode.  An rx_handler on the lower takes every frame
 * it receives and delivers it up through vrss0's queues; vrss0 transmits
 * through the lower.  MAC address, MTU limits and carrier follow the lower;
 * vrss0's receive filters (unicast and multicast lists, promiscuity,
 * allmulti) are pushed down to it, since the lower's filter is the one the
 * wire sees.
 *
 * In place, the frames stay the lower's: the rx_handler only chooses the
 * CPU they go up on, and lets them pass (inline, or when a ring, a park or
 * a hold hands them up); the lower keeps its addresses, routes and
 * firewall rules, and vrss0 carries the queues, the switch, the table,
 * the knobs and the statistics.  While vrss0 is down every frame passes.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/u64_stats_sync.h>
#include <net/rtnetlink.h>

#include "compat.h"
#include "device.h"
#include "gate.h"
#include "hashing.h"
#include "vrss.h"

static struct rtnl_link_ops vrss_link_ops;

DEFINE_PER_CPU(struct vrss_dev *, vrss_handing_up);

/* Whether new devices attach in place: for the first attach over SSH. */
static bool vrss_inplace_default;
module_param_named(inplace, vrss_inplace_default, bool, 0644);
MODULE_PARM_DESC(inplace, "new vrss devices attach in place (frames stay the lower's)");

/* skb_share_check(), with a reason for the drop; NULL if dropped. */
static struct sk_buff *vrss_unshare(struct vrss_dev *vd, struct sk_buff *skb)
{
	struct sk_buff *nskb;

	if (likely(!skb_shared(skb)))
		return skb;
	nskb = skb_clone(skb, GFP_ATOMIC);
	if (unlikely(!nskb)) {
		dev_core_stats_rx_dropped_inc(vd->dev);
		kfree_skb_reason(skb, SKB_DROP_REASON_NOMEM);
		return NULL;
	}
	consume_skb(skb);
	return nskb;
}

/*
 * In place: the frame is the lower's and stays so.  What vrss hands up
 * inline passes on, with the lower's queue; what it takes goes up later
 * from a ring, a park or a hold, and then passes here.
 */
static rx_handler_result_t vrss_handle_inplace(struct vrss_dev *vd,
					       struct sk_buff **pskb)
{
	struct sk_buff *skb;
	u16 queue;

	if (!netif_running(vd->dev) || __this_cpu_read(vrss_handing_up) == vd)
		return RX_HANDLER_PASS;
	skb = vrss_unshare(vd, *pskb);
	if (unlikely(!skb))
		return RX_HANDLER_CONSUMED;
	*pskb = skb;
	queue = skb->queue_mapping;
	if (vrss_rx(vd, skb) == RX_HANDLER_CONSUMED)
		return RX_HANDLER_CONSUMED;
	skb->queue_mapping = queue;
	return RX_HANDLER_PASS;
}

static rx_handler_result_t vrss_handle_frame(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct vrss_dev *vd = rcu_dereference(skb->dev->rx_handler_data);

	/* The lower's own looped-back frames stay the lower's, as on macvlan. */
	if (unlikely(skb->pkt_type == PACKET_LOOPBACK))
		return RX_HANDLER_PASS;
	if (READ_ONCE(vd->inplace))
		return vrss_handle_inplace(vd, pskb);
	if (unlikely(!netif_running(vd->dev))) {
		atomic64_inc(&vd->rx_dropped_down);
		kfree_skb_reason(skb, SKB_DROP_REASON_DEV_READY);
		return RX_HANDLER_CONSUMED;
	}
	skb = vrss_unshare(vd, skb);
	if (unlikely(!skb))
		return RX_HANDLER_CONSUMED;
	*pskb = skb;
	skb->dev = vd->dev;
	return vrss_rx(vd, skb);
}

static bool vrss_is_lower_of_vrss(const struct net_device *dev)
{
	return rcu_access_pointer(dev->rx_handler) == vrss_handle_frame;
}

/*
 * Transmit offloads, as on macvlan: checksum and segmentation are always
 * offered, since the lower's dev_queue_xmit() does in software what the
 * lower cannot; the rest only as the lower has it.
 */
#define VRSS_ALWAYS_ON	(NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_GSO_SOFTWARE | \
			 NETIF_F_GSO_ROBUST | NETIF_F_GSO_ENCAP_ALL)
#define VRSS_FROM_LOWER	(NETIF_F_HIGHDMA | NETIF_F_FRAGLIST)

static netdev_features_t vrss_fix_features(struct net_device *dev,
					   netdev_features_t features)
{
	struct vrss_dev *vd = netdev_priv(dev);

	return features & ((vd->lower->features & VRSS_FROM_LOWER) |
			   ~VRSS_FROM_LOWER);
}

/*
 * The lower counts promiscuity and allmulti per user: vrss0 holds one of
 * each while it is up with the flag set, as macvlan does.
 */
static int vrss_lower_rx_flags(struct vrss_dev *vd, unsigned int flags, int inc)
{
	int err = 0;

	if (flags & IFF_ALLMULTI) {
		err = dev_set_allmulti(vd->lower, inc);
		if (err)
			return err;
	}
	if (flags & IFF_PROMISC) {
		err = dev_set_promiscuity(vd->lower, inc);
		if (err && (flags & IFF_ALLMULTI))
			dev_set_allmulti(vd->lower, -inc);
	}
	return err;
}

static void vrss_change_rx_flags(struct net_device *dev, int change)
{
	struct vrss_dev *vd = netdev_priv(dev);

	if (!(dev->flags & IFF_UP))
		return;
	vrss_lower_rx_flags(vd, change & dev->flags, 1);
	vrss_lower_rx_flags(vd, change & ~dev->flags, -1);
}

/* Addresses added on vrss0 (multicast joins, fdb entries) reach the lower. */
static void vrss_set_rx_mode(struct net_device *dev)
{
	struct vrss_dev *vd = netdev_priv(dev);

	dev_uc_sync(vd->lower, dev);
	dev_mc_sync(vd->lower, dev);
}

static int vrss_open(struct net_device *dev)
{
	struct vrss_dev *vd = netdev_priv(dev);
	int err;

	err = vrss_lower_rx_flags(vd, dev->flags, 1);
	if (err)
		return err;
	vrss_queues_open(vd);
	vrss_queues_link_napi(vd, true);
	if (dev->features & NETIF_F_RXHASH)
		vrss_device_take(vd);
	vrss_hashing_open(vd);
	netif_stacked_transfer_operstate(vd->lower, dev);
	return 0;
}

static int vrss_stop(struct net_device *dev)
{
	struct vrss_dev *vd = netdev_priv(dev);

	vrss_hashing_stop(vd);
	vrss_device_release(vd);
	vrss_queues_link_napi(vd, false);
	vrss_queues_stop(vd);
	dev_uc_unsync(vd->lower, dev);
	dev_mc_unsync(vd->lower, dev);
	vrss_lower_rx_flags(vd, dev->flags, -1);
	return 0;
}

/* rxhash is the vRSS switch: load sampling runs only while it is on. */
static int vrss_set_features(struct net_device *dev,
			     netdev_features_t features)
{
	struct vrss_dev *vd = netdev_priv(dev);
	int err;

	if (!((dev->features ^ features) & NETIF_F_RXHASH))
		return 0;
	/* Device mode holds the lower's table while the gate may run. */
	if ((features & NETIF_F_RXHASH) && netif_running(dev))
		vrss_device_take(vd);
	err = vrss_hashing_set(vd, features & NETIF_F_RXHASH);
	if (!err && !(features & NETIF_F_RXHASH))
		vrss_device_release(vd);
	return err;
}

static netdev_tx_t vrss_start_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct vrss_dev *vd = netdev_priv(dev);
	struct pcpu_sw_netstats *tx = this_cpu_ptr(vd->tx_stats);
	unsigned int len = skb->len;
	int ret;

	skb->dev = vd->lower;
	/*
	 * Congestion notified (NET_XMIT_CN) is not a drop: the frame went.
	 * (net_xmit_eval() evaluates its argument twice: not the xmit.)
	 */
	ret = dev_queue_xmit(skb);
	if (likely(net_xmit_eval(ret) == 0)) {
		u64_stats_update_begin(&tx->syncp);
		u64_stats_inc(&tx->tx_packets);
		u64_stats_add(&tx->tx_bytes, len);
		u64_stats_update_end(&tx->syncp);
	} else {
		dev_core_stats_tx_dropped_inc(dev);
	}
	return NETDEV_TX_OK;
}

/*
 * netdev netlink qstats (6.9+, compat.h).  Queues in use report their own
 * packets and bytes; the base stats hold what the others counted, so that
 * the sums equal ip -s link's totals.  Transmit is counted per device, on
 * its one tx queue.
 */
static void vrss_qstats_rx(struct net_device *dev, int i, u64 *packets,
			   u64 *bytes)
{
	vrss_queue_read_stats(netdev_priv(dev), i, packets, bytes);
}

static void vrss_qstats_tx(struct net_device *dev, int i, u64 *packets,
			   u64 *bytes)
{
	struct vrss_dev *vd = netdev_priv(dev);
	unsigned int start;
	int cpu;

	*packets = 0;
	*bytes = 0;
	for_each_possible_cpu(cpu) {
		const struct pcpu_sw_netstats *tx = per_cpu_ptr(vd->tx_stats, cpu);
		u64 p, b;

		do {
			start = u64_stats_fetch_begin(&tx->syncp);
			p = u64_stats_read(&tx->tx_packets);
			b = u64_stats_read(&tx->tx_bytes);
		} while (u64_stats_fetch_retry(&tx->syncp, start));
		*packets += p;
		*bytes += b;
	}
}

static void vrss_qstats_base(struct net_device *dev, u64 *rx_packets,
			     u64 *rx_bytes, u64 *tx_packets, u64 *tx_bytes)
{
	struct vrss_dev *vd = netdev_priv(dev);
	unsigned int i;
	u64 packets, bytes;

	*rx_packets = 0;
	*rx_bytes = 0;
	for (i = dev->real_num_rx_queues; i < dev->num_rx_queues; i++) {
		vrss_queue_read_stats(vd, i, &packets, &bytes);
		*rx_packets += packets;
		*rx_bytes += bytes;
	}
	*tx_packets = 0;
	*tx_bytes = 0;
}

VRSS_STAT_OPS(vrss_stat_ops, vrss_qstats_rx, vrss_qstats_tx, vrss_qstats_base);

static void vrss_get_stats64(struct net_device *dev,
			     struct rtnl_link_stats64 *s)
{
	struct vrss_dev *vd = netdev_priv(dev);
	unsigned int i;

	dev_fetch_sw_netstats(s, vd->tx_stats);
	for (i = 0; i < dev->num_rx_queues; i++) {
		u64 packets, bytes;

		vrss_queue_read_stats(vd, i, &packets, &bytes);
		s->rx_packets += packets;
		s->rx_bytes += bytes;
		s->rx_dropped += atomic64_read(&vd->queues[i].drops);
	}
	s->rx_dropped += atomic64_read(&vd->rx_dropped_down);
}

static int vrss_change_mtu(struct net_device *dev, int mtu)
{
	struct vrss_dev *vd = netdev_priv(dev);

	if (mtu > vd->lower->mtu)
		return -EINVAL;
	dev->mtu = mtu;
	return 0;
}

static int vrss_get_iflink(const struct net_device *dev)
{
	struct vrss_dev *vd = netdev_priv(dev);

	return READ_ONCE(vd->lower->ifindex);
}

static const struct net_device_ops vrss_netdev_ops = {
	.ndo_open		= vrss_open,
	.ndo_stop		= vrss_stop,
	.ndo_start_xmit		= vrss_start_xmit,
	.ndo_get_stats64	= vrss_get_stats64,
	.ndo_change_mtu		= vrss_change_mtu,
	.ndo_set_features	= vrss_set_features,
	.ndo_fix_features	= vrss_fix_features,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_change_rx_flags	= vrss_change_rx_flags,
	.ndo_set_rx_mode	= vrss_set_rx_mode,
	.ndo_get_iflink		= vrss_get_iflink,
};

static void vrss_dev_free(struct net_device *dev)
{
	struct vrss_dev *vd = netdev_priv(dev);

	/* Down: no frame or poll queues their works any more. */
	vrss_device_uninit(vd);
	vrss_hashing_uninit(vd);
	vrss_gate_uninit(vd);
	vrss_move_uninit(vd);
	vrss_rss_uninit(vd);
	vrss_queues_free(vd);
	vrss_rx_uninit(vd);
	free_percpu(vd->tx_stats);
}

static void vrss_setup(struct net_device *dev)
{
	ether_setup(dev);
	dev->netdev_ops = &vrss_netdev_ops;
	dev->ethtool_ops = &vrss_ethtool_ops;
	dev->needs_free_netdev = true;
	dev->priv_flags &= ~IFF_TX_SKB_SHARING;
	/* Secondary unicast addresses go to the lower's list (set_rx_mode). */
	dev->priv_flags |= IFF_NO_QUEUE | IFF_UNICAST_FLT;
	/* Checked against the lower's in newlink, then capped by it. */
	dev->max_mtu = ETH_MAX_MTU;
	vrss_compat_set_lltx(dev);
	dev->hw_features |= VRSS_ALWAYS_ON | VRSS_FROM_LOWER;
	dev->features |= VRSS_ALWAYS_ON;
	dev->vlan_features |= VRSS_ALWAYS_ON;
	/* Receive hashing is the vRSS switch: available, off by default. */
	dev->hw_features |= NETIF_F_RXHASH;
	vrss_compat_set_stat_ops(dev, &vrss_stat_ops);
	/* /sys/class/net/<dev>/vrss/: the load knobs and status. */
	dev->sysfs_groups[0] = &vrss_sysfs_group;
}

/* One queue per online vCPU unless `ip link add ... numrxqueues N`. */
static unsigned int vrss_get_num_rx_queues(void)
{
	return num_online_cpus();
}

static struct net_device *vrss_lower(struct net *net, struct nlattr *tb[],
				     struct netlink_ext_ack *extack)
{
	struct net_device *lower;

	if (!tb[IFLA_LINK]) {
		NL_SET_ERR_MSG(extack, "vrss needs a lower device (link DEV)");
		return ERR_PTR(-EINVAL);
	}
	lower = __dev_get_by_index(net, nla_get_u32(tb[IFLA_LINK]));
	if (!lower) {
		NL_SET_ERR_MSG(extack, "vrss: lower device not found");
		return ERR_PTR(-ENODEV);
	}
	if (lower->flags & IFF_LOOPBACK) {
		NL_SET_ERR_MSG(extack, "vrss: the lower device cannot be loopback");
		return ERR_PTR(-EINVAL);
	}
	if (lower->rtnl_link_ops == &vrss_link_ops) {
		NL_SET_ERR_MSG(extack, "vrss: the lower device cannot itself be vrss");
		return ERR_PTR(-EINVAL);
	}
	if (lower->type != ARPHRD_ETHER || lower->addr_len != ETH_ALEN) {
		NL_SET_ERR_MSG(extack, "vrss: the lower device must be Ethernet");
		return ERR_PTR(-EINVAL);
	}
	/* One rx_handler per device: a port of anything takes it. */
	if (netdev_is_rx_handler_busy(lower)) {
		NL_SET_ERR_MSG(extack,
			       "vrss: the lower device already has an rx_handler (a bridge, bond, team, macvlan, ipvlan or vrss port)");
		return ERR_PTR(-EBUSY);
	}
	/* netdev_rx_handler_register() would refuse it, without a word. */
	if (lower->priv_flags & IFF_NO_RX_HANDLER) {
		NL_SET_ERR_MSG(extack,
			       "vrss: the lower device takes no rx_handler (an ipvlan device)");
		return ERR_PTR(-EINVAL);
	}
	return lower;
}

static int vrss_newlink(struct net *src_net, struct net_device *dev,
			struct nlattr *tb[], struct nlattr *data[],
			struct netlink_ext_ack *extack)
{
	struct vrss_dev *vd = netdev_priv(dev);
	struct net_device *lower;
	int err;

	lower = vrss_lower(src_net, tb, extack);
	if (IS_ERR(lower))
		return PTR_ERR(lower);

	/*
	 * Frames reach vrss0 through the lower's filter, which passes the
	 * lower's address: vrss0 has that one and no other.
	 */
	if (tb[IFLA_ADDRESS] && !ether_addr_equal(dev->dev_addr, lower->dev_addr)) {
		NL_SET_ERR_MSG(extack, "vrss: the MAC address is the lower device's");
		return -EINVAL;
	}
	/* A queue per possible vCPU at most: more would only share vCPUs. */
	if (dev->num_rx_queues > num_possible_cpus()) {
		NL_SET_ERR_MSG(extack, "vrss: numrxqueues above the number of possible CPUs");
		return -EINVAL;
	}
	/* Transmit goes through the lower's queues. */
	if (dev->num_tx_queues != 1) {
		NL_SET_ERR_MSG(extack, "vrss: one transmit queue only (numtxqueues 1)");
		return -EINVAL;
	}
	if (tb[IFLA_MTU] && (dev->mtu > lower->mtu || dev->mtu < lower->min_mtu)) {
		NL_SET_ERR_MSG(extack, "vrss: MTU outside the lower device's limits");
		return -EINVAL;
	}

	vd->dev = dev;
	vd->lower = lower;
	vd->ring_size = VRSS_RING_SIZE;
	vd->inplace = READ_ONCE(vrss_inplace_default);
	if (!tb[IFLA_MTU])
		dev->mtu = lower->mtu;
	dev->min_mtu = lower->min_mtu;
	dev->max_mtu = lower->mtu;
	eth_hw_addr_set(dev, lower->dev_addr);
	dev->features |= lower->features & VRSS_FROM_LOWER;
	netif_inherit_tso_max(dev, lower);

	vd->tx_stats = netdev_alloc_pcpu_stats(struct pcpu_sw_netstats);
	if (!vd->tx_stats)
		return -ENOMEM;
	/* Serialises what rebuilds the table in effect: every file's. */
	mutex_init(&vd->steer_lock);
	vrss_move_init(vd);
	vrss_hashing_init(vd);
	vrss_device_init(vd);
	err = vrss_rx_init(vd);
	if (err)
		goto err_hashing;
	err = vrss_queues_alloc(vd);
	if (err)
		goto err_rx;
	err = vrss_rss_init(vd);
	if (err)
		goto err_queues;
	err = vrss_gate_init(vd);
	if (err)
		goto err_rss;

	/*
	 * register_netdevice() calls a priv_destructor on some of its
	 * failures: set ours only once it succeeded, so that every failure
	 * is unwound here, and unregistering later frees through it.
	 */
	err = register_netdevice(dev);
	if (err)
		goto err_gate;
	dev->priv_destructor = vrss_dev_free;
	err = netdev_upper_dev_link(lower, dev, extack);
	if (err)
		goto err_unregister;
	err = netdev_rx_handler_register(lower, vrss_handle_frame, vd);
	if (err)
		goto err_unlink;
	netif_stacked_transfer_operstate(lower, dev);
	return 0;

err_unlink:
	netdev_upper_dev_unlink(lower, dev);
err_unregister:
	unregister_netdevice(dev);
	return err;
err_gate:
	vrss_gate_uninit(vd);
err_rss:
	vrss_rss_uninit(vd);
err_queues:
	vrss_queues_free(vd);
err_rx:
	vrss_rx_uninit(vd);
err_hashing:
	vrss_device_uninit(vd);
	vrss_hashing_uninit(vd);
	vrss_move_uninit(vd);
	free_percpu(vd->tx_stats);
	return err;
}

static void vrss_dellink(struct net_device *dev, struct list_head *head)
{
	struct vrss_dev *vd = netdev_priv(dev);

	netdev_rx_handler_unregister(vd->lower);
	netdev_upper_dev_unlink(vd->lower, dev);
	unregister_netdevice_queue(dev, head);
}

/* The lower may live in another namespace than vrss0 (ip -d link). */
static struct net *vrss_get_link_net(const struct net_device *dev)
{
	struct vrss_dev *vd = netdev_priv(dev);

	return dev_net(vd->lower);
}

static struct rtnl_link_ops vrss_link_ops = {
	.kind			= VRSS_DRV_NAME,
	.priv_size		= sizeof(struct vrss_dev),
	.setup			= vrss_setup,
	.newlink		= vrss_newlink,
	.dellink		= vrss_dellink,
	.get_num_rx_queues	= vrss_get_num_rx_queues,
	.get_link_net		= vrss_get_link_net,
};

/* Follow the lower device: its removal, carrier, MTU and address. */
static int vrss_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *lower = netdev_notifier_info_to_dev(ptr);
	struct vrss_dev *vd;
	LIST_HEAD(kill);

	if (!vrss_is_lower_of_vrss(lower))
		return NOTIFY_DONE;
	vd = rtnl_dereference(lower->rx_handler_data);

	switch (event) {
	case NETDEV_REGISTER:
		if (netif_running(vd->dev)) {
			netif_addr_lock_bh(vd->dev);
			vrss_set_rx_mode(vd->dev);
			netif_addr_unlock_bh(vd->dev);
		}
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		netif_stacked_transfer_operstate(lower, vd->dev);
		break;
	case NETDEV_CHANGEMTU:
		vd->dev->max_mtu = lower->mtu;
		if (vd->dev->mtu > lower->mtu)
			dev_set_mtu(vd->dev, lower->mtu);
		break;
	case NETDEV_FEAT_CHANGE:
		netif_inherit_tso_max(vd->dev, lower);
		netdev_update_features(vd->dev);
		break;
	case NETDEV_CHANGEADDR:
		eth_hw_addr_set(vd->dev, lower->dev_addr);
		call_netdevice_notifiers(NETDEV_CHANGEADDR, vd->dev);
		break;
	case NETDEV_UNREGISTER:
		/*
		 * A move to another namespace: the lower stays vrss0's, but
		 * the move flushes its address lists.  Take vrss0's entries
		 * back now; NETDEV_REGISTER in the new namespace syncs them
		 * again.
		 */
		if (lower->reg_state != NETREG_UNREGISTERING) {
			if (netif_running(vd->dev)) {
				dev_uc_unsync(lower, vd->dev);
				dev_mc_unsync(lower, vd->dev);
			}
			break;
		}
		vrss_dellink(vd->dev, &kill);
		unregister_netdevice_many(&kill);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block vrss_notifier = {
	.notifier_call = vrss_netdev_event,
};

int vrss_netdev_init(void)
{
	int err;

	err = register_netdevice_notifier(&vrss_notifier);
	if (err)
		return err;
	err = rtnl_link_register(&vrss_link_ops);
	if (err)
		unregister_netdevice_notifier(&vrss_notifier);
	return err;
}

/* rtnl_link_unregister() deletes every vrss device first. */
void vrss_netdev_exit(void)
{
	rtnl_link_unregister(&vrss_link_ops);
	unregister_netdevice_notifier(&vrss_notifier);
}
