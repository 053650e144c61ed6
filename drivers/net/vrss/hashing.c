// SPDX-License-Identifier: GPL-2.0
/*
 * Receive hashing's lifecycle (ethtool -K rxhash, -X hkey, -N
 * rx-flow-hash), one state under steer_lock (enum vrss_hashing_state):
 *
 *   OFF --rxhash on--> ON --rxhash off--> DRAIN_OFF --last bucket home--> OFF
 *                       ON --new key or fields--> DRAIN_ON --last home--> ON
 *
 * Receive hashing stops, or a new key or new hash fields apply, only once
 * every bucket is back on the primary: a flow whose frames wait on a
 * spread ring must not overtake them inline, or from another bucket.  So
 * the table in effect goes to width 1 at once (the gate stopped), and the
 * rings are left to hand up what they hold, as long as that takes:
 * hashing goes on meanwhile, the buckets' new frames park (move.c), and
 * ethtool returns.  Each time a ring's poll publishes its position or
 * parked frames went up, the drain tries again (vrss_hashing_wake()); the
 * last bucket home ends it.  rxhash on meanwhile only turns DRAIN_OFF
 * into DRAIN_ON; the gate starts again at the end.  While RTNL sets a
 * drain up (hs.staging: the gate stopped, the table shrinking), an
 * earlier drain does not end, nor the gate start.  While the device is
 * down the rings do not run: the drain waits for the next open.
 *
 * vrss_hashing.on is what every frame reads (rx.c): true in every state
 * but OFF, written here alone.
 */
#include <linux/rtnetlink.h>

#include "gate.h"
#include "hashing.h"

/* A drain woken by nothing for this long tries again anyway. */
#define VRSS_DRAIN_BACKSTOP	(HZ / 10)

/* Under steer_lock: the gate starts, unless a drain holds it off. */
static void vrss_hashing_gate_start_locked(struct vrss_dev *vd)
{
	if (!vrss_hashing_draining(vd->hs.state) && !vd->hs.staging)
		vrss_gate_start_locked(vd);
}

static void vrss_hashing_gate_start(struct vrss_dev *vd)
{
	mutex_lock(&vd->steer_lock);
	vrss_hashing_gate_start_locked(vd);
	mutex_unlock(&vd->steer_lock);
}

/* Under steer_lock: one try of the drain; true once every bucket is home. */
static bool vrss_hashing_step(struct vrss_dev *vd)
{
	bool off;

	lockdep_assert_held(&vd->steer_lock);
	if (!vrss_hashing_draining(vd->hs.state))
		return true;
	if (vd->hs.staging)
		return false;
	/*
	 * Draining, and hs.kicked cleared, before the heads are read;
	 * pairs with the barrier of the polls and of vrss_park_up().
	 */
	smp_mb();
	if (vrss_move_drain(vd))
		return false;
	off = vd->hs.state == VRSS_HASHING_DRAIN_OFF;
	WRITE_ONCE(vd->hs.state, off ? VRSS_HASHING_OFF : VRSS_HASHING_ON);
	vrss_rss_rehash(vd);
	/*
	 * Off: a frame still on the hashing path finds its bucket home and
	 * goes up inline, as it would unhashed; none leaves the primary, as
	 * claims wait for hashing (vrss_move_steer_changed()).
	 */
	if (off)
		WRITE_ONCE(vd->hs.on, false);
	else if (vd->hs.up)
		vrss_hashing_gate_start_locked(vd);
	return true;
}

static void vrss_hashing_work(struct work_struct *work)
{
	struct vrss_dev *vd = container_of(to_delayed_work(work),
					   struct vrss_dev, hs.work);

	/* Wakes from now on queue the next try (vrss_hashing_wake()). */
	WRITE_ONCE(vd->hs.kicked, false);
	mutex_lock(&vd->steer_lock);
	if (!vrss_hashing_step(vd) && vd->hs.up && !vd->hs.staging)
		queue_delayed_work(system_highpri_wq, &vd->hs.work,
				   VRSS_DRAIN_BACKSTOP);
	mutex_unlock(&vd->steer_lock);
}

/*
 * Under RTNL: a drain is set up.  No drain ends and the gate does not
 * start until vrss_hashing_drain(): the gate stops, the table in effect
 * goes to width 1.  An error (the table could not shrink) undoes the
 * staging; the caller restarts the gate.
 */
static int vrss_hashing_stage(struct vrss_dev *vd)
{
	int err;

	mutex_lock(&vd->steer_lock);
	vd->hs.staging = true;
	mutex_unlock(&vd->steer_lock);
	vrss_gate_stop(vd);
	err = vrss_rss_single(vd);
	if (err) {
		mutex_lock(&vd->steer_lock);
		vd->hs.staging = false;
		mutex_unlock(&vd->steer_lock);
		/* A drain that could not end meanwhile goes on. */
		vrss_hashing_wake(vd);
	}
	return err;
}

/*
 * Under RTNL, staged (vrss_hashing_stage()) while frames are hashed: a
 * drain begins (or goes on), to stop hashing (@off) or to apply the
 * user's key and fields.  With nothing hashed there is nothing to wait
 * for; what needs no wait (rings empty, no traffic) ends here, before
 * ethtool returns.
 */
static void vrss_hashing_drain(struct vrss_dev *vd, bool off)
{
	enum vrss_hashing_state state;
	bool done;

	mutex_lock(&vd->steer_lock);
	vd->hs.staging = false;
	if (!vd->hs.on) {
		vrss_rss_rehash(vd);
		mutex_unlock(&vd->steer_lock);
		return;
	}
	/* Hashing and no drain: rxhash is on, and stays on unless @off. */
	state = off || vd->hs.state == VRSS_HASHING_DRAIN_OFF ?
		VRSS_HASHING_DRAIN_OFF : VRSS_HASHING_DRAIN_ON;
	WRITE_ONCE(vd->hs.state, state);
	done = vrss_hashing_step(vd);
	mutex_unlock(&vd->steer_lock);
	if (!done)
		mod_delayed_work(system_highpri_wq, &vd->hs.work, 0);
}

/*
 * Under RTNL: ethtool's -X (table, key) and -N.  A new key or new fields
 * re-map the flows: while frames are hashed, the table in effect goes to
 * width 1 and the gate stops first, and the change hashes once every
 * bucket is home.  An error before the change (the table could not
 * shrink) changes nothing.
 */
int vrss_hashing_change(struct vrss_dev *vd, const struct vrss_hashing_change *c)
{
	struct net_device *dev = vd->dev;
	bool rehash;
	int err;

	rehash = c->ports >= 0 ||
		 (c->key && memcmp(c->key, rtnl_dereference(vd->rss.user)->key,
				   VRSS_RSS_KEY_SIZE));
	if (!rehash) {
		err = vrss_rss_update(vd, c->indir, c->key);
		if (!err)
			vrss_gate_reconfig(vd);
		return err;
	}
	/*
	 * Hashing starts only under RTNL: if off, it stays off (if on, a
	 * drain may still stop it meanwhile, which is no harm).
	 */
	if (READ_ONCE(vd->hs.on)) {
		err = vrss_hashing_stage(vd);
		if (err) {
			if ((dev->features & NETIF_F_RXHASH) && netif_running(dev))
				vrss_hashing_gate_start(vd);
			return err;
		}
	}
	if (c->ports >= 0)
		err = vrss_rss_set_ports(vd, c->ports);
	else
		err = vrss_rss_update(vd, c->indir, c->key);
	/* The user's key and fields from now on, or once every bucket is home. */
	vrss_hashing_drain(vd, false);
	return err;
}

/* rxhash off: width 1 at once, hashing stops once every bucket is home. */
static int vrss_hashing_off(struct vrss_dev *vd)
{
	int err;

	err = vrss_hashing_stage(vd);
	if (err) {
		/* The core keeps the old features on an error: so does vrss. */
		if (netif_running(vd->dev))
			vrss_hashing_gate_start(vd);
		return err;
	}
	vrss_hashing_drain(vd, true);
	return 0;
}

/*
 * rxhash on: hashing starts from width 1, every bucket on the primary.
 * Frames that went up unhashed need no care: a move off the primary
 * waits a grace period after its claim, which they are inside of or done
 * with.  A frame of the last period, still hashed (maybe with another
 * key), is waited for before the first claim (move.c).
 */
static void vrss_hashing_on(struct vrss_dev *vd)
{
	mutex_lock(&vd->steer_lock);
	if (vrss_hashing_draining(vd->hs.state)) {
		/* Hashing never stopped: the gate starts at the end. */
		WRITE_ONCE(vd->hs.state, VRSS_HASHING_DRAIN_ON);
		mutex_unlock(&vd->steer_lock);
		return;
	}
	vrss_rss_rehash(vd);
	vrss_move_reset(vd);
	WRITE_ONCE(vd->hs.state, VRSS_HASHING_ON);
	/* The buckets' states before the flag; pairs with vrss_rx(). */
	smp_store_release(&vd->hs.on, true);
	mutex_unlock(&vd->steer_lock);
	if (netif_running(vd->dev))
		vrss_hashing_gate_start(vd);
}

/* Under RTNL: rxhash, the vRSS switch, turned on or off. */
int vrss_hashing_set(struct vrss_dev *vd, bool on)
{
	if (!on)
		return vrss_hashing_off(vd);
	vrss_hashing_on(vd);
	return 0;
}

/* Under RTNL: vrss0 up.  A drain waits for the rings, which run again. */
void vrss_hashing_open(struct vrss_dev *vd)
{
	mutex_lock(&vd->steer_lock);
	vd->hs.up = true;
	mutex_unlock(&vd->steer_lock);
	vrss_hashing_wake(vd);
	if (vd->dev->features & NETIF_F_RXHASH)
		vrss_hashing_gate_start(vd);
}

/* Under RTNL: vrss0 down.  A drain waits for the next open. */
void vrss_hashing_stop(struct vrss_dev *vd)
{
	mutex_lock(&vd->steer_lock);
	vd->hs.up = false;
	mutex_unlock(&vd->steer_lock);
	vrss_gate_stop(vd);
}

void vrss_hashing_init(struct vrss_dev *vd)
{
	vd->hs.state = VRSS_HASHING_OFF;
	INIT_DELAYED_WORK(&vd->hs.work, vrss_hashing_work);
}

/* Down: no poll or parked frame wakes the drain any more. */
void vrss_hashing_uninit(struct vrss_dev *vd)
{
	cancel_delayed_work_sync(&vd->hs.work);
}
