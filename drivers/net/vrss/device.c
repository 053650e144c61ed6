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
 * device had put there before the change (and its GRO lets go of them);
 * then the bucket's next frame on the new ring hands them up before
 * itself, or, if none comes, a work item does.  A frame that still
 * comes on a ring its bucket left, unheld, is counted late
 * (device_late_frames): a device that queued it long before, or one that
 * no longer follows the table, which then gets it again.  While held, a
 * bucket does not move again.
 *
 * Writes need RTNL, and are made as the ethtool core makes them (the
 * lower present and awake, between its begin and complete).  The paths
 * that take and give the table back hold RTNL; the load work, which
 * changes the table in effect under steer_lock alone, leaves the write to
 * a work item that only trylocks RTNL, since the stop path cancels that
 * work with RTNL held.  The holds have their per-bucket locks: handing
 * frames up never waits for RTNL.
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/pm_runtime.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "compat.h"
#include "device.h"
#include "hashing.h"

/* How long a moved bucket's frames on its new ring wait for the old one. */
#define VRSS_DEVICE_HOLD	max_t(unsigned long, msecs_to_jiffies(4), 2)
/* After a frame on a ring its bucket is not on: the table again, once. */
#define VRSS_DEVICE_RECOMMIT	(HZ / 10)

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

/*
 * Under RTNL: whether vrss takes the lower's table when vrss0 is up with
 * rxhash on (device, or auto on a lower that has one).
 */
bool vrss_device_wanted(struct vrss_dev *vd)
{
	ASSERT_RTNL();
	return vd->dm.mode == VRSS_MODE_DEVICE ||
	       (vd->dm.mode == VRSS_MODE_AUTO && !vrss_device_unfit(vd->lower));
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

static u8 *vrss_device_key(u32 *table, u32 size)
{
	return (u8 *)(table + size);
}

/*
 * Around a call of the lower's ethtool ops, as the ethtool core makes one:
 * the device awake (runtime PM) and present, between its begin and
 * complete.  vrss_device_begin()'s error means no call; on success
 * vrss_device_end() follows the call.
 */
static int vrss_device_begin(struct net_device *lower)
{
	struct device *parent = lower->dev.parent;
	int err = -ENODEV;

	if (parent)
		pm_runtime_get_sync(parent);
	if (netif_device_present(lower))
		err = lower->ethtool_ops->begin ? lower->ethtool_ops->begin(lower) : 0;
	if (err && parent)
		pm_runtime_put(parent);
	return err;
}

static void vrss_device_end(struct net_device *lower)
{
	if (lower->ethtool_ops->complete)
		lower->ethtool_ops->complete(lower);
	if (lower->dev.parent)
		pm_runtime_put(lower->dev.parent);
}

static int vrss_device_write(struct vrss_dev *vd, u32 *table)
{
	struct vrss_device *dm = &vd->dm;
	int err;

	err = vrss_device_begin(vd->lower);
	if (!err) {
		err = vrss_compat_set_rxfh(vd->lower, table, dm->size,
					   dm->key_size ? vrss_device_key(table, dm->size) : NULL,
					   dm->key_size);
		vrss_device_end(vd->lower);
	}
	if (err) {
		atomic64_inc(&dm->commit_errors);
		netdev_warn_once(vd->dev, "vrss: %s refused its RSS table: %d\n",
				 vd->lower->name, err);
		return err;
	}
	atomic64_inc(&dm->commits);
	return 0;
}

/* The ring a table of the lower's size puts bucket @b on. */
static u8 vrss_device_ring(const struct vrss_device *dm, const u32 *table,
			   unsigned int b)
{
	return table[b % dm->size];
}

/*
 * @list's frames of a bucket held on @ring up to the stack, in order: in
 * the receive path (RCU held, BH off), or from the work with both taken.
 */
static void vrss_device_up(struct vrss_dev *vd, struct sk_buff_head *list,
			   unsigned int ring)
{
	struct vrss_dev *prev = vrss_up_begin(vd);
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(list))) {
		if (unlikely(!vrss_up_open(vd))) {
			atomic64_inc(&vd->rx_dropped_down);
			kfree_skb_reason(skb, SKB_DROP_REASON_DEV_READY);
			continue;
		}
		vrss_rx_device_count(vd, skb, ring);
		skb->dev = vrss_up_dev(vd);
		vrss_receive_skb(skb);
	}
	vrss_up_end(prev);
}

/* Under held[b]'s lock: bucket @b no longer held. */
static void vrss_device_unheld(struct vrss_device *dm, unsigned int b)
{
	WRITE_ONCE(dm->hold[b], 0);
	atomic_dec(&dm->holds);
}

/*
 * From the receive path, some bucket held: true if bucket @b's frame on
 * @ring was taken (held, or dropped because too many are).  A moved
 * bucket's frame on its new ring is held until the hold ends; the first
 * one after that hands the held ones up before itself (the ring's NAPI
 * runs on one CPU at a time: nothing of the bucket's can come between).
 * While the work hands them up, every frame of the bucket queues behind.
 * Frames on the old ring go up at once: they are the earlier ones.
 */
bool vrss_device_hold(struct vrss_dev *vd, struct sk_buff *skb, unsigned int b,
		      unsigned int ring)
{
	struct vrss_device *dm = &vd->dm;
	struct sk_buff_head *held = &dm->held[b];
	bool queued = false, drop = false;
	struct sk_buff_head list;
	u8 h = READ_ONCE(dm->hold[b]);

	/* A frame of the memory reserves is not kept waiting. */
	if (likely(!h) || (h != VRSS_DEVICE_DELIVERING && h != ring + 1) ||
	    skb_pfmemalloc(skb))
		return false;
	__skb_queue_head_init(&list);
	spin_lock(&held->lock);
	h = dm->hold[b];
	if (h == ring + 1 && !time_before(jiffies, dm->until[b])) {
		skb_queue_splice_init(held, &list);
		vrss_device_unheld(dm, b);
	} else if (h == VRSS_DEVICE_DELIVERING || h == ring + 1) {
		queued = true;
		drop = skb_queue_len(held) >= vd->ring_size;
		if (!drop)
			__skb_queue_tail(held, skb);
	}
	spin_unlock(&held->lock);
	if (!skb_queue_empty(&list))
		vrss_device_up(vd, &list, ring);
	if (unlikely(drop))
		vrss_queue_drop(&vd->queues[0], skb, SKB_DROP_REASON_FULL_RING);
	else if (queued)
		atomic64_inc(&vd->mv.held);
	return queued;
}

/*
 * Bucket @b's held frames up, from process context, if its hold is over
 * (or @now); frames that come meanwhile queue behind and, if there are
 * any, the bucket's next frame on its ring hands them up (the flow is
 * alive).  False if it is still held.
 */
static bool vrss_device_unhold_one(struct vrss_dev *vd, unsigned int b, bool now)
{
	struct vrss_device *dm = &vd->dm;
	struct sk_buff_head *held = &dm->held[b];
	struct sk_buff_head list;
	u8 h;

	__skb_queue_head_init(&list);
	spin_lock_bh(&held->lock);
	h = dm->hold[b];
	if (!h || h == VRSS_DEVICE_DELIVERING) {
		spin_unlock_bh(&held->lock);
		return true;
	}
	if (!now && time_before(jiffies, dm->until[b])) {
		spin_unlock_bh(&held->lock);
		return false;
	}
	WRITE_ONCE(dm->hold[b], VRSS_DEVICE_DELIVERING);
	do {
		skb_queue_splice_init(held, &list);
		spin_unlock_bh(&held->lock);
		local_bh_disable();
		vrss_device_up(vd, &list, h - 1);
		local_bh_enable();
		spin_lock_bh(&held->lock);
	} while (now && !skb_queue_empty(held));
	if (skb_queue_empty(held)) {
		vrss_device_unheld(dm, b);
		spin_unlock_bh(&held->lock);
		return true;
	}
	/* Over: the next frame on the ring hands these up before itself. */
	WRITE_ONCE(dm->until[b], jiffies);
	WRITE_ONCE(dm->hold[b], h);
	spin_unlock_bh(&held->lock);
	return false;
}

/* Every bucket whose hold is over (or all, @now); the work again if not. */
static void vrss_device_unhold(struct vrss_dev *vd, bool now)
{
	struct vrss_device *dm = &vd->dm;
	bool again = false;
	unsigned int b;

	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		if (READ_ONCE(dm->hold[b]) && !vrss_device_unhold_one(vd, b, now))
			again = true;
	if (again)
		queue_delayed_work(system_freezable_wq, &dm->unhold, 1);
	else if (!now)
		/* Buckets kept where they were while held may move now. */
		queue_delayed_work(system_freezable_wq, &dm->commit, 0);
}

static void vrss_device_unhold_work(struct work_struct *work)
{
	struct vrss_dev *vd = container_of(to_delayed_work(work),
					   struct vrss_dev, dm.unhold);

	vrss_device_unhold(vd, false);
}

/*
 * Under RTNL, held: @table (and the key after it) into the lower.  The
 * buckets it moves are held from before the write (a frame the device
 * puts on the new ring as soon as it switches finds the hold), until a
 * moment after it; one still held stays on its ring here, and moves when
 * the hold is over (the unhold work commits again).
 */
static void vrss_device_move(struct vrss_dev *vd, u32 *table, size_t len)
{
	struct vrss_device *dm = &vd->dm;
	bool moved[VRSS_INDIR_SIZE] = {};
	bool any = false;
	unsigned int b, j;
	u8 from, to;

	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		struct sk_buff_head *held = &dm->held[b];

		from = READ_ONCE(dm->ring_of[b]);
		to = vrss_device_ring(dm, table, b);
		if (from == to)
			continue;
		spin_lock_bh(&held->lock);
		if (!dm->hold[b]) {
			/* Until the write is done; then a few ms more. */
			dm->until[b] = jiffies + HZ;
			WRITE_ONCE(dm->hold[b], to + 1);
			atomic_inc(&dm->holds);
			moved[b] = true;
			any = true;
		}
		spin_unlock_bh(&held->lock);
		if (!moved[b])
			for (j = b % dm->size; j < dm->size; j += VRSS_INDIR_SIZE)
				table[j] = from;
	}
	if (vrss_device_write(vd, table)) {
		/* Nothing moved: what was held goes up. */
		for (b = 0; b < VRSS_INDIR_SIZE; b++)
			if (moved[b])
				WRITE_ONCE(dm->until[b], jiffies);
		if (any)
			queue_delayed_work(system_freezable_wq, &dm->unhold, 0);
		return;
	}
	memcpy(dm->written, table, len);
	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		WRITE_ONCE(dm->ring_of[b], vrss_device_ring(dm, table, b));
		if (moved[b])
			WRITE_ONCE(dm->until[b], jiffies + VRSS_DEVICE_HOLD);
	}
	if (any)
		queue_delayed_work(system_freezable_wq, &dm->unhold, VRSS_DEVICE_HOLD);
}

/*
 * Under RTNL, held: the table in effect into the lower's, if it differs
 * from what vrss wrote last (or a stray frame asked for it again).  Entry
 * j of a lower's table of another size takes bucket j mod 128's queue:
 * both index by the low bits of the same hash, so a smaller power of two
 * folds the buckets and a larger one repeats them.  A new key goes in
 * only with a table that moves nothing, no bucket held: with one that
 * does, every flow's bucket would change under the holds.
 */
static void vrss_device_commit(struct vrss_dev *vd)
{
	struct vrss_device *dm = &vd->dm;
	size_t tlen = dm->size * sizeof(u32), len = tlen + dm->key_size;
	const struct vrss_steer *steer;
	const struct vrss_rss *rss;
	bool again;
	u32 *table;
	u32 j;

	/* Cleared before the table is read: a later stray asks again. */
	again = xchg(&dm->recommit, false);
	/* ethtool -L on the lower or on vrss0 changes how many rings there are. */
	WRITE_ONCE(dm->rings, min3(vd->lower->real_num_rx_queues,
				   vd->dev->real_num_rx_queues,
				   VRSS_DEVICE_DELIVERING - 1U));
	table = kmalloc(len, GFP_KERNEL);
	if (!table) {
		atomic64_inc(&dm->commit_errors);
		return;
	}
	mutex_lock(&vd->steer_lock);
	steer = rcu_dereference_protected(vd->rss.steer, lockdep_is_held(&vd->steer_lock));
	rss = rcu_dereference_protected(vd->rss.user, lockdep_is_held(&vd->steer_lock));
	for (j = 0; j < dm->size; j++)
		table[j] = min(steer->queue[j % VRSS_INDIR_SIZE], dm->rings - 1);
	memcpy(vrss_device_key(table, dm->size), rss->key, dm->key_size);
	mutex_unlock(&vd->steer_lock);
	if (dm->key_size &&
	    memcmp(vrss_device_key(table, dm->size), vrss_device_key(dm->written, dm->size),
		   dm->key_size) &&
	    (memcmp(table, dm->written, tlen) || atomic_read(&dm->holds))) {
		/* The key once the table has settled (the unhold work commits). */
		memcpy(vrss_device_key(table, dm->size),
		       vrss_device_key(dm->written, dm->size), dm->key_size);
		if (!memcmp(table, dm->written, tlen))
			queue_delayed_work(system_freezable_wq, &dm->commit, VRSS_DEVICE_HOLD);
	}
	if (again || memcmp(table, dm->written, len))
		vrss_device_move(vd, table, len);
	kfree(table);
}

/*
 * From the receive path: a frame came, unheld, on a ring the table written
 * last does not put its bucket on.  Late after a move, or a device that no
 * longer follows the table (QEMU turns its RSS off at virtio-net's
 * VQ_PAIRS_SET, which a resume or an XDP attach sends; a write to the
 * lower's table by anyone else): either way the table is written again,
 * at most once an interval.
 */
void vrss_device_stray(struct vrss_dev *vd)
{
	atomic64_inc(&vd->dm.late);
	if (!READ_ONCE(vd->dm.recommit) && !xchg(&vd->dm.recommit, true))
		queue_delayed_work(system_freezable_wq, &vd->dm.commit,
				   VRSS_DEVICE_RECOMMIT);
}

static void vrss_device_commit_work(struct work_struct *work)
{
	struct vrss_dev *vd = container_of(to_delayed_work(work),
					   struct vrss_dev, dm.commit);

	/* The stop path cancels this work under RTNL: never wait for it. */
	if (!rtnl_trylock()) {
		queue_delayed_work(system_freezable_wq, &vd->dm.commit, 1);
		return;
	}
	if (vd->dm.state == VRSS_DEVICE_HELD)
		vrss_device_commit(vd);
	rtnl_unlock();
}

/* Under steer_lock: the table in effect changed; the lower's follows. */
void vrss_device_steer_changed(struct vrss_dev *vd)
{
	mod_delayed_work(system_freezable_wq, &vd->dm.commit, 0);
}

/* Under steer_lock: every bucket home, no drain: nothing on vrss's rings. */
static bool vrss_device_may_take(struct vrss_dev *vd)
{
	bool ok;

	mutex_lock(&vd->steer_lock);
	ok = vrss_move_home(vd) && !vrss_hashing_draining(vd->hs.state);
	mutex_unlock(&vd->steer_lock);
	return ok;
}

static void vrss_device_free_tables(struct vrss_device *dm)
{
	kfree(dm->saved);
	kfree(dm->written);
	dm->saved = NULL;
	dm->written = NULL;
}

/*
 * Under RTNL, vrss0 going up with rxhash on or rxhash going on while up,
 * before the gate starts: take the lower's table, if device mode was
 * asked for (device, or auto) and the lower has one.  Software mode if
 * not.
 */
void vrss_device_take(struct vrss_dev *vd)
{
	const struct ethtool_ops *ops = vd->lower->ethtool_ops;
	struct vrss_device *dm = &vd->dm;
	const char *why;
	unsigned int b;
	size_t len;
	int err;

	ASSERT_RTNL();
	if (dm->state == VRSS_DEVICE_HELD || dm->mode == VRSS_MODE_SOFTWARE)
		return;
	why = vrss_device_unfit(vd->lower);
	/* auto: software mode is what a lower without a table gets, no news. */
	if (why && dm->mode == VRSS_MODE_AUTO)
		return;
	if (!why && !vrss_device_may_take(vd))
		why = "frames still on vrss's rings (rxhash off and on again takes the table)";
	if (why) {
		netdev_warn(vd->dev, "vrss: software mode: %s\n", why);
		return;
	}
	dm->size = ops->get_rxfh_indir_size(vd->lower);
	dm->key_size = ops->get_rxfh_key_size ? ops->get_rxfh_key_size(vd->lower) : 0;
	/* vrss's key, or none: the device's hash must be vrss's. */
	if (dm->key_size != VRSS_RSS_KEY_SIZE)
		dm->key_size = 0;
	dm->rings = min3(vd->lower->real_num_rx_queues, vd->dev->real_num_rx_queues,
			 VRSS_DEVICE_DELIVERING - 1U);
	dm->recommit = false;
	len = dm->size * sizeof(u32) + dm->key_size;
	dm->saved = kzalloc(len, GFP_KERNEL);
	dm->written = kzalloc(len, GFP_KERNEL);
	if (!dm->saved || !dm->written) {
		err = -ENOMEM;
		goto fail;
	}
	err = vrss_device_begin(vd->lower);
	if (err)
		goto fail;
	err = vrss_compat_get_rxfh(vd->lower, dm->saved, dm->size,
				   dm->key_size ? vrss_device_key(dm->saved, dm->size) : NULL,
				   dm->key_size);
	vrss_device_end(vd->lower);
	if (err)
		goto fail;
	dm->configured = netif_is_rxfh_configured(vd->lower);
	/*
	 * The user's key is the lower's until vrss's can go in; its table
	 * never equals one, so the first commit writes.  The buckets are
	 * where the user's table put them.
	 */
	memcpy(dm->written, dm->saved, len);
	memset(dm->written, 0xff, dm->size * sizeof(u32));
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		dm->ring_of[b] = vrss_device_ring(dm, dm->saved, b);
	/* What the receive path reads of it, before it sees the state. */
	smp_store_release(&dm->state, VRSS_DEVICE_HELD);
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
	vrss_device_free_tables(dm);
}

/*
 * Under RTNL, the gate stopped (rxhash off, vrss0 down or going away):
 * the user's table and key back in the lower, as vrss found them.
 */
void vrss_device_release(struct vrss_dev *vd)
{
	struct vrss_device *dm = &vd->dm;
	int err;

	ASSERT_RTNL();
	if (dm->state != VRSS_DEVICE_HELD)
		return;
	cancel_delayed_work_sync(&dm->commit);
	cancel_delayed_work_sync(&dm->unhold);
	/*
	 * What is held goes up while still held (nothing moves without
	 * RTNL, so nothing is held after), then the receive path stops
	 * looking, then the user's table is back.
	 */
	vrss_device_unhold(vd, true);
	WRITE_ONCE(dm->state, VRSS_DEVICE_SOFTWARE);
	synchronize_net();
	if (vd->lower->reg_state == NETREG_REGISTERED &&
	    memcmp(dm->saved, dm->written, dm->size * sizeof(u32) + dm->key_size)) {
		err = vrss_device_write(vd, dm->saved);
		if (err)
			netdev_warn(vd->dev, "vrss: %s kept vrss's RSS table: %d\n",
				    vd->lower->name, err);
	}
	if (!dm->configured)
		vd->lower->priv_flags &= ~IFF_RXFH_CONFIGURED;
	vrss_device_free_tables(dm);
}

void vrss_device_init(struct vrss_dev *vd)
{
	unsigned int b;

	vd->dm.state = VRSS_DEVICE_SOFTWARE;
	vd->dm.mode = VRSS_MODE_AUTO;
	atomic_set(&vd->dm.holds, 0);
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
