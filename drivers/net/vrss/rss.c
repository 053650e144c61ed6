// SPDX-License-Identifier: GPL-2.0
/*
 * RSS: the Toeplitz hash of a frame's addresses (and ports), the key and the
 * indirection table that turn it into a queue.  The load gate (gate.c)
 * calls down into this file to change the width or move buckets; what
 * changes the user's table (ethtool.c) tells the policy afterwards.
 *
 * Key and table live in one RCU-protected block, replaced whole, so that
 * a change under traffic loses nothing.  The frames are steered by a
 * second table derived from the user's at the width the load policy
 * chose; both are rebuilt under steer_lock.  The hash in effect (the
 * key's lookup table and the hashed fields) is a third block: a new key
 * or new fields wait in hash_next until hashing.c's drain has brought
 * every bucket home (vrss_rss_rehash()).
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "device.h"
#include "gate.h"
#include "vrss.h"

static struct vrss_rss *vrss_rss_alloc(const u32 *indir, const u8 *key)
{
	struct vrss_rss *rss = kzalloc(sizeof(*rss), GFP_KERNEL);

	if (!rss)
		return NULL;
	memcpy(rss->indir, indir, sizeof(rss->indir));
	rss->indir_max = vrss_indir_max(indir);
	memcpy(rss->key, key, sizeof(rss->key));
	return rss;
}

static struct vrss_hash *vrss_hash_alloc(const u8 *key, unsigned int ports)
{
	struct vrss_hash *hash = kvzalloc(sizeof(*hash), GFP_KERNEL);

	if (!hash)
		return NULL;
	hash->ports = ports;
	vrss_toeplitz_init(&hash->toeplitz, key);
	return hash;
}

/* Under steer_lock: @hash waits for the next drain, in place of any other. */
static void vrss_rss_hash_pending(struct vrss_dev *vd, struct vrss_hash *hash)
{
	kvfree(vd->rss.hash_next);
	vd->rss.hash_next = hash;
}

/*
 * Under steer_lock, while no bucket is away from the primary (nothing
 * hashed, or hashing.c's drain brought every one home): the user's key and
 * fields, if new, in effect.  A frame hashed with the old ones finds its
 * bucket on the primary and goes up inline, unless a claim took the
 * bucket off it meanwhile: so the next claim first waits for a grace
 * period (vrss_move_steer_changed()), after which every frame is hashed
 * with the new ones.
 */
void vrss_rss_rehash(struct vrss_dev *vd)
{
	struct vrss_hash *old;

	if (!vd->rss.hash_next)
		return;
	old = rcu_replace_pointer(vd->rss.hash, vd->rss.hash_next,
				  lockdep_is_held(&vd->steer_lock));
	vd->rss.hash_next = NULL;
	kvfree_rcu(old, rcu);
	/* The next claim waits for the readers of the old one (move.c). */
	vd->mv.claim_sync = true;
}

static struct vrss_rss *vrss_rss_get(struct vrss_dev *vd)
{
	return rcu_dereference_protected(vd->rss.user,
					 lockdep_is_held(&vd->steer_lock));
}

/*
 * How many queues the user's table can spread over (in device mode, no
 * more than the lower has rings).
 */
static unsigned int vrss_rss_queues(struct vrss_dev *vd,
				    const struct vrss_rss *rss)
{
	return min3(READ_ONCE(vd->dev->real_num_rx_queues), rss->indir_max + 1,
		    vrss_device_rings(vd));
}

/*
 * Under steer_lock: the table in effect went from width @old to @width;
 * the time spent spread (wider than one queue) adds up.
 */
static void vrss_rss_spread_time(struct vrss_dev *vd, unsigned int old,
				 unsigned int width)
{
	if (old <= 1 && width > 1) {
		vd->rss.spread_since = get_jiffies_64();
		vd->rss.spread = true;
	} else if (old > 1 && width <= 1 && vd->rss.spread) {
		vd->rss.spread_jiffies += get_jiffies_64() - vd->rss.spread_since;
		vd->rss.spread = false;
	}
}

/* Time spent spread so far, in milliseconds. */
u64 vrss_rss_spread_ms(struct vrss_dev *vd)
{
	u64 j;

	mutex_lock(&vd->steer_lock);
	j = vd->rss.spread_jiffies;
	if (vd->rss.spread)
		j += get_jiffies_64() - vd->rss.spread_since;
	mutex_unlock(&vd->steer_lock);
	return jiffies64_to_msecs(j);
}

/* Under steer_lock: the table in effect at the policy's width. */
static int vrss_rss_rebuild(struct vrss_dev *vd)
{
	const struct vrss_rss *rss = vrss_rss_get(vd);
	struct vrss_steer *steer, *old;

	steer = kzalloc(sizeof(*steer), GFP_KERNEL);
	if (!steer)
		return -ENOMEM;
	steer->width = clamp(vd->rss.width, 1U, vrss_rss_queues(vd, rss));
	vrss_indir_effective(steer->queue, rss->indir, steer->width);

	old = rcu_replace_pointer(vd->rss.steer, steer,
				  lockdep_is_held(&vd->steer_lock));
	vrss_rss_spread_time(vd, old ? old->width : 1, steer->width);
	kfree_rcu(old, rcu);
	/* Whatever was rebalanced is gone: the gate starts over. */
	vd->rss.gen++;
	vrss_move_steer_changed(vd);
	return 0;
}

int vrss_rss_init(struct vrss_dev *vd)
{
	u8 key[VRSS_RSS_KEY_SIZE];
	u32 indir[VRSS_INDIR_SIZE];
	struct vrss_hash *hash;
	struct vrss_rss *rss;
	int err;

	/* The system key, so the hash matches /proc/sys/net/core/netdev_rss_key. */
	netdev_rss_key_fill(key, sizeof(key));
	vrss_indir_fill_default(indir, vd->dev->real_num_rx_queues);
	rss = vrss_rss_alloc(indir, key);
	if (!rss)
		return -ENOMEM;
	vd->rss.ports = VRSS_FLOW_ALL_PORTS;
	rcu_assign_pointer(vd->rss.user, rss);
	hash = vrss_hash_alloc(key, vd->rss.ports);
	if (!hash) {
		vrss_rss_uninit(vd);
		return -ENOMEM;
	}
	rcu_assign_pointer(vd->rss.hash, hash);

	mutex_lock(&vd->steer_lock);
	vd->rss.width = 1;
	err = vrss_rss_rebuild(vd);
	mutex_unlock(&vd->steer_lock);
	if (err)
		vrss_rss_uninit(vd);
	return err;
}

void vrss_rss_uninit(struct vrss_dev *vd)
{
	kfree(rcu_replace_pointer(vd->rss.steer, NULL, true));
	kfree(rcu_replace_pointer(vd->rss.user, NULL, true));
	kvfree(rcu_replace_pointer(vd->rss.hash, NULL, true));
	kvfree(vd->rss.hash_next);
	vd->rss.hash_next = NULL;
}

/*
 * Under RTNL: a new table and/or key (NULL keeps the current one).  A new
 * key is the user's at once; it hashes once hashing.c applies it
 * (vrss_hashing_change()).
 */
int vrss_rss_update(struct vrss_dev *vd, const u32 *indir, const u8 *key)
{
	struct vrss_hash *hash = NULL;
	struct vrss_rss *old, *rss;
	int err = -ENOMEM;

	mutex_lock(&vd->steer_lock);
	old = vrss_rss_get(vd);
	if (key && memcmp(key, old->key, sizeof(old->key))) {
		hash = vrss_hash_alloc(key, vd->rss.ports);
		if (!hash)
			goto out;
	}
	rss = vrss_rss_alloc(indir ?: old->indir, key ?: old->key);
	if (!rss)
		goto out;
	rcu_assign_pointer(vd->rss.user, rss);
	err = vrss_rss_rebuild(vd);
	if (err) {
		/* Keep the pair consistent: back to the old table. */
		rcu_assign_pointer(vd->rss.user, old);
		synchronize_net();
		kfree(rss);
		goto out;
	}
	kfree_rcu(old, rcu);
	if (hash)
		vrss_rss_hash_pending(vd, hash);
	hash = NULL;
out:
	kvfree(hash);
	mutex_unlock(&vd->steer_lock);
	return err;
}

/*
 * Under RTNL: the flow types hashed on ports (-N rx-flow-hash), the
 * user's at once, hashing once hashing.c applies them.
 */
int vrss_rss_set_ports(struct vrss_dev *vd, unsigned int ports)
{
	struct vrss_hash *hash;

	mutex_lock(&vd->steer_lock);
	hash = vrss_hash_alloc(vrss_rss_get(vd)->key, ports);
	if (hash) {
		/* Read by ethtool -n without the lock. */
		WRITE_ONCE(vd->rss.ports, ports);
		vrss_rss_hash_pending(vd, hash);
	}
	mutex_unlock(&vd->steer_lock);
	return hash ? 0 : -ENOMEM;
}

/* Under RTNL, after ethtool -L: the default table follows the queue count. */
void vrss_rss_channels_changed(struct vrss_dev *vd)
{
	u32 indir[VRSS_INDIR_SIZE];

	if (netif_is_rxfh_configured(vd->dev)) {
		/* Same table, maybe fewer queues to spread over. */
		mutex_lock(&vd->steer_lock);
		vrss_rss_rebuild(vd);
		mutex_unlock(&vd->steer_lock);
		return;
	}
	vrss_indir_fill_default(indir, vd->dev->real_num_rx_queues);
	/* On allocation failure the old table stays; steering clamps it. */
	vrss_rss_update(vd, indir, NULL);
}

/* Under steer_lock: how wide the policy may go. */
unsigned int vrss_rss_max_width(struct vrss_dev *vd)
{
	return vrss_rss_queues(vd, vrss_rss_get(vd));
}

/*
 * Under RTNL, load sampling stopped: every bucket to the primary queue.
 * On allocation failure the wider table stays (and moves stay in order).
 */
int vrss_rss_single(struct vrss_dev *vd)
{
	int err;

	mutex_lock(&vd->steer_lock);
	err = vrss_rss_set_width(vd, 1);
	mutex_unlock(&vd->steer_lock);
	return err;
}

/* Under steer_lock: the policy chose a width; returns the one in effect. */
int vrss_rss_set_width(struct vrss_dev *vd, unsigned int width)
{
	unsigned int old = vd->rss.width;
	int err;

	vd->rss.width = width;
	err = vrss_rss_rebuild(vd);
	if (err)
		vd->rss.width = old;
	return err;
}

/* Under steer_lock: a copy of the table in effect; returns its width. */
unsigned int vrss_rss_get_steer(struct vrss_dev *vd, u32 *queue)
{
	const struct vrss_steer *steer;

	steer = rcu_dereference_protected(vd->rss.steer,
					  lockdep_is_held(&vd->steer_lock));
	memcpy(queue, steer->queue, sizeof(steer->queue));
	return steer->width;
}

/*
 * Under steer_lock: buckets rebalanced, @queue the new table in effect at
 * the same width (move.c moves the buckets in order).  The next width or
 * table change starts again from the user's table.
 */
int vrss_rss_set_steer(struct vrss_dev *vd, const u32 *queue)
{
	struct vrss_steer *steer, *old;

	old = rcu_dereference_protected(vd->rss.steer,
					lockdep_is_held(&vd->steer_lock));
	steer = kmemdup(old, sizeof(*old), GFP_KERNEL);
	if (!steer)
		return -ENOMEM;
	memcpy(steer->queue, queue, sizeof(steer->queue));
	rcu_assign_pointer(vd->rss.steer, steer);
	kfree_rcu(old, rcu);
	vrss_move_steer_changed(vd);
	return 0;
}

/*
 * Toeplitz input (include/vrss/parse.h): the frame's first bytes from the
 * network header.  The linear part is parsed in place first; when the
 * ports are found there, more bytes cannot change the input (the parser
 * reads at the same offsets, and every check it made still holds), so the
 * copy out of the frags is only for frames whose headers are not all in
 * the head, or whose ports cannot be hashed anyway.
 */
static unsigned int vrss_rss_input(struct sk_buff *skb, unsigned int ports,
				   u8 *in, bool *l4)
{
	unsigned int len = min_t(unsigned int, skb->len, VRSS_PARSE_BYTES);
	unsigned int head = min(skb_headlen(skb), len);
	unsigned int proto = ntohs(skb->protocol);
	u8 buf[VRSS_PARSE_BYTES];
	unsigned int n;
	const u8 *data;

	n = vrss_parse_input(skb->data, head, proto, ports, in, l4);
	if (*l4 || head == len)
		return n;
	data = skb_header_pointer(skb, 0, len, buf);
	if (!data)
		return 0;
	return vrss_parse_input(data, len, proto, ports, in, l4);
}

/*
 * The bucket of a frame: its Toeplitz hash, also stored in the skb, taken
 * modulo the table size.  False when there is nothing to hash.
 */
bool vrss_rss_bucket(struct vrss_dev *vd, struct sk_buff *skb,
		     unsigned int *bucket)
{
	const struct vrss_hash *h = rcu_dereference(vd->rss.hash);
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	unsigned int len;
	bool l4;
	u32 hash;

	len = vrss_rss_input(skb, h->ports, in, &l4);
	if (!len)
		return false;
	hash = vrss_toeplitz_hash(&h->toeplitz, in, len);
	skb_set_hash(skb, hash, l4 ? PKT_HASH_TYPE_L4 : PKT_HASH_TYPE_L3);
	*bucket = vrss_indir_bucket(hash);
	return true;
}
