// SPDX-License-Identifier: GPL-2.0
/*
 * Device mode: the lower's own RSS indirection table steers.  Where the
 * lower keeps a table the guest writes (virtio-net with RSS, igb, the
 * cloud NICs), vrss0's queue N is the lower's ring N and a bucket moves by
 * an entry of that table: the host (or the NIC) puts the bucket's frames
 * on the new ring, that ring's interrupt wakes the new vCPU, and vrss
 * hands every frame up inline where it arrives.  No ring of vrss's, no
 * IPI, no second pass of GRO: what software mode costs the vCPU it means
 * to relieve.
 *
 * vrss holds the lower's table while vrss0 is up with rxhash on: it saves
 * the user's table and key then, writes its own key (so that the device's
 * hash and vrss's per-bucket counts agree) and the table in effect (every
 * entry on ring 0 at width 1, spread as the gate widens), and writes the
 * user's back when rxhash goes off and when vrss0 goes down or away.
 * While it holds the table the lower is flagged as configured, as a
 * user's -X would flag it, so that ethtool -L cannot shrink the rings
 * under it.
 *
 * A bucket that moves keeps its order as software mode's do, as far as
 * the device lets vrss see: its frames that reach the new ring are held
 * for a few milliseconds, while the old ring's NAPI hands up what the
 * device had put there before the change (and its GRO lets go of them),
 * then go up from a work item ahead of any later one.  A frame that still
 * comes on a ring its bucket left, unheld, is counted late
 * (device_late_frames): a device that queued it long before, or one that
 * does not follow the table.  While held, a bucket does not move again.
 *
 * Writes need RTNL.  The paths that take and give the table back hold it;
 * the load work, which changes the table in effect under steer_lock alone,
 * leaves the write to a work item that only trylocks RTNL, since the stop
 * path cancels that work with RTNL held.
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "compat.h"
#include "device.h"

/* How long a moved bucket's frames on its new ring wait for the old one. */
#define VRSS_DEVICE_HOLD	max_t(unsigned long, msecs_to_jiffies(4), 2)

/* NULL if @lower has a table vrss can write; else why not. */
static const char *vrss_device_unfit(struct net_device *lower)
{
	const struct ethtool_ops *ops = lower->ethtool_ops;
	u32 size;

	if (!ops || !ops->get_rxfh_indir_size || !ops->get_rxfh || !ops->set_rxfh)
		return "the lower device has no RSS table to write";
	size = ops->get_rxfh_indir_size(lower);
	if (!size)
		return "the lower device's RSS table is off (no RSS feature)";
	if (lower->real_num_rx_queues < 2)
		return "the lower device has one receive queue";
	return NULL;
}

enum vrss_mode vrss_device_mode(struct vrss_dev *vd)
{
	return READ_ONCE(vd->dm.mode);
}

/*
 * Under RTNL: the mode from now on.  Only while vrss holds no table and
 * steers nothing (down, or rxhash off), so that no bucket is away.
 */
int vrss_device_set_mode(struct vrss_dev *vd, enum vrss_mode mode,
			 const char **why)
{
	ASSERT_RTNL();
	if (netif_running(vd->dev) && (vd->dev->features & NETIF_F_RXHASH)) {
		*why = "set the mode with rxhash off or vrss0 down";
		return -EBUSY;
	}
	if (mode == VRSS_MODE_DEVICE) {
		*why = vrss_device_unfit(vd->lower);
		if (*why)
			return -EOPNOTSUPP;
	}
	WRITE_ONCE(vd->dm.mode, mode);
	return 0;
}

/* The rings the table may spread over: any number if not held. */
unsigned int vrss_device_rings(struct vrss_dev *vd)
{
	/* dm.rings is set before the state, under RTNL. */
	return vrss_device_held(vd) ? READ_ONCE(vd->dm.rings) : UINT_MAX;
}

u64 vrss_device_commits(struct vrss_dev *vd)
{
	return atomic64_read(&vd->dm.commits);
}

u64 vrss_device_late(struct vrss_dev *vd)
{
	return atomic64_read(&vd->dm.late);
}

static u8 *vrss_device_key(u32 *table, u32 size)
{
	return (u8 *)(table + size);
}

static int vrss_device_write(struct vrss_dev *vd, u32 *table)
{
	struct vrss_device *dm = &vd->dm;
	int err;

	err = vrss_compat_set_rxfh(vd->lower, table, dm->size,
				   dm->key_size ? vrss_device_key(table, dm->size) : NULL,
				   dm->key_size);
	if (err) {
		atomic64_inc(&dm->commit_errors);
		netdev_warn_once(vd->dev, "vrss: %s refused its RSS table: %d\n",
				 vd->lower->name, err);
		return err;
	}
	atomic64_inc(&dm->commits);
	return 0;
}

/* The ring entry @j of a table of the lower's size puts bucket @b on. */
static u8 vrss_device_ring(const struct vrss_device *dm, const u32 *table,
			   unsigned int b)
{
	return table[b % dm->size];
}

/*
 * Bucket @b's held frames up to the stack, in order, from process
 * context: BH off and RCU held, as in the rx_handler.  Frames that come
 * meanwhile, on any ring, queue behind them (DELIVERING) and go up too;
 * then the bucket's frames go up where they arrive.
 */
static void vrss_device_deliver(struct vrss_dev *vd, unsigned int b)
{
	struct vrss_device *dm = &vd->dm;
	struct sk_buff_head *held = &dm->held[b];
	struct sk_buff_head list;
	struct sk_buff *skb;

	__skb_queue_head_init(&list);
	spin_lock_bh(&held->lock);
	WRITE_ONCE(dm->hold[b], VRSS_DEVICE_DELIVERING);
	while (!skb_queue_empty(held)) {
		skb_queue_splice_init(held, &list);
		spin_unlock_bh(&held->lock);
		local_bh_disable();
		rcu_read_lock();
		while ((skb = __skb_dequeue(&list))) {
			if (unlikely(!netif_running(vd->dev))) {
				atomic64_inc(&vd->rx_dropped_down);
				kfree_skb_reason(skb, SKB_DROP_REASON_DEV_READY);
				continue;
			}
			vrss_rx_device_count(vd, skb, vrss_device_ring(dm, dm->written, b));
			netif_receive_skb_core(skb);
		}
		rcu_read_unlock();
		local_bh_enable();
		spin_lock_bh(&held->lock);
	}
	WRITE_ONCE(dm->hold[b], 0);
	spin_unlock_bh(&held->lock);
}

/*
 * From the receive path, the lower's table held: true if bucket @b's
 * frame on @ring is held (a moved bucket's on its new ring, or any while
 * its held frames go up), or dropped because too many are.
 */
bool vrss_device_hold(struct vrss_dev *vd, struct sk_buff *skb, unsigned int b,
		      unsigned int ring)
{
	struct vrss_device *dm = &vd->dm;
	struct sk_buff_head *held = &dm->held[b];
	bool queued = false, drop = false;
	u8 h = READ_ONCE(dm->hold[b]);

	if (likely(!h) || (h != VRSS_DEVICE_DELIVERING && h != ring + 1))
		return false;
	spin_lock(&held->lock);
	h = dm->hold[b];
	if (h == VRSS_DEVICE_DELIVERING || (h && h == ring + 1)) {
		queued = true;
		drop = skb_queue_len(held) >= vd->ring_size;
		if (!drop)
			__skb_queue_tail(held, skb);
	}
	spin_unlock(&held->lock);
	if (unlikely(drop))
		vrss_queue_drop(&vd->queues[0], skb, SKB_DROP_REASON_FULL_RING);
	else if (queued)
		atomic64_inc(&vd->rx_held);
	return queued;
}

/* Every held bucket's frames up; then nothing is held. */
static void vrss_device_unhold(struct vrss_dev *vd)
{
	struct vrss_device *dm = &vd->dm;
	unsigned int b;

	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		if (READ_ONCE(dm->hold[b]))
			vrss_device_deliver(vd, b);
	WRITE_ONCE(dm->holding, false);
}

/*
 * Under RTNL, held: @table (and the key after it) into the lower.  The
 * buckets it moves are held from before the write (a frame the device
 * puts on the new ring as soon as it switches finds the hold) until the
 * unhold work; the unhold work is what lets a held bucket move again, so
 * one is kept on its ring here meanwhile.
 */
static void vrss_device_move(struct vrss_dev *vd, u32 *table, size_t len)
{
	struct vrss_device *dm = &vd->dm;
	bool moved = false;
	unsigned int b;
	u8 from, to;

	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		from = READ_ONCE(dm->ring_of[b]);
		to = vrss_device_ring(dm, table, b);
		if (from == to)
			continue;
		if (READ_ONCE(dm->hold[b])) {
			/* Every entry of the bucket's stays where it is. */
			unsigned int j;

			for (j = b % dm->size; j < dm->size; j += VRSS_INDIR_SIZE)
				table[j] = from;
			continue;
		}
		WRITE_ONCE(dm->hold[b], to + 1);
		moved = true;
	}
	if (moved) {
		WRITE_ONCE(dm->holding, true);
		/* The holds before the table: pairs with the receive path's reads. */
		smp_mb();
	}
	if (vrss_device_write(vd, table)) {
		/* Nothing moved: whatever was held goes up now. */
		if (moved)
			vrss_device_unhold(vd);
		return;
	}
	memcpy(dm->written, table, len);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		WRITE_ONCE(dm->ring_of[b], vrss_device_ring(dm, table, b));
	if (moved)
		mod_delayed_work(system_wq, &dm->unhold, VRSS_DEVICE_HOLD);
}

/*
 * Under RTNL, held: the table in effect into the lower's, if it differs
 * from what vrss wrote last.  Entry j of a lower's table of another size
 * takes bucket j mod 128's queue: both index by the low bits of the same
 * hash (the key is vrss's), so a smaller power of two folds the buckets
 * and a larger one repeats them.
 */
static void vrss_device_commit(struct vrss_dev *vd)
{
	struct vrss_device *dm = &vd->dm;
	size_t len = dm->size * sizeof(u32) + dm->key_size;
	const struct vrss_steer *steer;
	const struct vrss_rss *rss;
	u32 *table;
	u32 j;

	table = kmalloc(len, GFP_KERNEL);
	if (!table) {
		atomic64_inc(&dm->commit_errors);
		return;
	}
	mutex_lock(&vd->steer_lock);
	steer = rcu_dereference_protected(vd->steer, lockdep_is_held(&vd->steer_lock));
	rss = rcu_dereference_protected(vd->rss, lockdep_is_held(&vd->steer_lock));
	for (j = 0; j < dm->size; j++)
		table[j] = min(steer->queue[j % VRSS_INDIR_SIZE], dm->rings - 1);
	memcpy(vrss_device_key(table, dm->size), rss->key, dm->key_size);
	mutex_unlock(&vd->steer_lock);
	if (memcmp(table, dm->written, len))
		vrss_device_move(vd, table, len);
	kfree(table);
}

/*
 * Under RTNL, as every change of the holds is: the held frames up, then
 * the buckets kept where they were while held may move.
 */
static void vrss_device_unhold_work(struct work_struct *work)
{
	struct vrss_dev *vd = container_of(to_delayed_work(work),
					   struct vrss_dev, dm.unhold);

	/* The stop path cancels this work under RTNL: never wait for it. */
	if (!rtnl_trylock()) {
		queue_delayed_work(system_wq, &vd->dm.unhold, 1);
		return;
	}
	if (vd->dm.state == VRSS_DEVICE_HELD) {
		vrss_device_unhold(vd);
		vrss_device_commit(vd);
	}
	rtnl_unlock();
}

static void vrss_device_commit_work(struct work_struct *work)
{
	struct vrss_dev *vd = container_of(to_delayed_work(work),
					   struct vrss_dev, dm.commit);

	/* The stop path cancels this work under RTNL: never wait for it. */
	if (!rtnl_trylock()) {
		queue_delayed_work(system_wq, &vd->dm.commit, 1);
		return;
	}
	if (vd->dm.state == VRSS_DEVICE_HELD)
		vrss_device_commit(vd);
	rtnl_unlock();
}

/* Under steer_lock: the table in effect changed; the lower's follows. */
void vrss_device_steer_changed(struct vrss_dev *vd)
{
	mod_delayed_work(system_wq, &vd->dm.commit, 0);
}

/*
 * Under RTNL, vrss0 going up with rxhash on or rxhash going on while up,
 * before the gate starts: take the lower's table, if device mode was
 * asked for and the lower still has one.  Software mode if not.
 */
void vrss_device_take(struct vrss_dev *vd)
{
	const struct ethtool_ops *ops = vd->lower->ethtool_ops;
	struct vrss_device *dm = &vd->dm;
	unsigned int b;
	const char *why;
	size_t len;
	int err;

	ASSERT_RTNL();
	if (dm->state == VRSS_DEVICE_HELD || dm->mode != VRSS_MODE_DEVICE)
		return;
	why = vrss_device_unfit(vd->lower);
	if (why) {
		netdev_warn(vd->dev, "vrss: software mode: %s\n", why);
		return;
	}
	dm->size = ops->get_rxfh_indir_size(vd->lower);
	dm->key_size = ops->get_rxfh_key_size ? ops->get_rxfh_key_size(vd->lower) : 0;
	/* vrss's key, or none: the device's hash must be vrss's. */
	if (dm->key_size != VRSS_RSS_KEY_SIZE)
		dm->key_size = 0;
	/* hold[] keeps a ring plus one in a byte. */
	dm->rings = min3(vd->lower->real_num_rx_queues, vd->dev->real_num_rx_queues,
			 VRSS_DEVICE_DELIVERING - 1U);
	len = dm->size * sizeof(u32) + dm->key_size;
	dm->saved = kzalloc(len, GFP_KERNEL);
	dm->written = kzalloc(len, GFP_KERNEL);
	if (!dm->saved || !dm->written) {
		err = -ENOMEM;
		goto fail;
	}
	err = vrss_compat_get_rxfh(vd->lower, dm->saved, dm->size,
				   dm->key_size ? vrss_device_key(dm->saved, dm->size) : NULL,
				   dm->key_size);
	if (err)
		goto fail;
	dm->configured = netif_is_rxfh_configured(vd->lower);
	/* Never equal to a table: the first commit writes. */
	memset(dm->written, 0xff, len);
	/* The user's table puts the buckets where the first commit moves them from. */
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		dm->ring_of[b] = vrss_device_ring(dm, dm->saved, b);
	WRITE_ONCE(dm->state, VRSS_DEVICE_HELD);
	vd->lower->priv_flags |= IFF_RXFH_CONFIGURED;
	vrss_device_commit(vd);
	if (dm->written[0] == U32_MAX) {
		/* Refused: nothing of vrss's in the lower's table. */
		vrss_device_release(vd);
		netdev_warn(vd->dev, "vrss: software mode: the lower refused its table\n");
	}
	return;
fail:
	netdev_warn(vd->dev, "vrss: software mode: cannot read the lower's table: %d\n", err);
	kfree(dm->saved);
	kfree(dm->written);
	dm->saved = NULL;
	dm->written = NULL;
}

/*
 * Under RTNL, the gate stopped (rxhash off, vrss0 down or going away):
 * the user's table and key back in the lower, as vrss found them.
 */
void vrss_device_release(struct vrss_dev *vd)
{
	struct vrss_device *dm = &vd->dm;

	ASSERT_RTNL();
	if (dm->state != VRSS_DEVICE_HELD)
		return;
	WRITE_ONCE(dm->state, VRSS_DEVICE_SOFTWARE);
	cancel_delayed_work_sync(&dm->commit);
	cancel_delayed_work_sync(&dm->unhold);
	/*
	 * No frame is on its way into a hold any more (the receive path
	 * read the state in an RCU section); what is held goes up before
	 * the user's table is back.
	 */
	synchronize_net();
	vrss_device_unhold(vd);
	if (memcmp(dm->saved, dm->written, dm->size * sizeof(u32) + dm->key_size))
		vrss_device_write(vd, dm->saved);
	if (!dm->configured)
		vd->lower->priv_flags &= ~IFF_RXFH_CONFIGURED;
	kfree(dm->saved);
	kfree(dm->written);
	dm->saved = NULL;
	dm->written = NULL;
}

void vrss_device_init(struct vrss_dev *vd)
{
	unsigned int b;

	vd->dm.state = VRSS_DEVICE_SOFTWARE;
	vd->dm.mode = VRSS_MODE_AUTO;
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		skb_queue_head_init(&vd->dm.held[b]);
	INIT_DELAYED_WORK(&vd->dm.commit, vrss_device_commit_work);
	INIT_DELAYED_WORK(&vd->dm.unhold, vrss_device_unhold_work);
}

/* After vrss0 went down (which gave the table back): nothing held. */
void vrss_device_uninit(struct vrss_dev *vd)
{
	unsigned int b;

	cancel_delayed_work_sync(&vd->dm.unhold);
	cancel_delayed_work_sync(&vd->dm.commit);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		skb_queue_purge(&vd->dm.held[b]);
	WARN_ON_ONCE(vd->dm.saved);
}
