// SPDX-License-Identifier: GPL-2.0
/*
 * Receive queues: one ring and one NAPI context per queue, each processed on
 * its own CPU.
 *
 * The lower device's rx_handler runs on whichever CPU received the frame.
 * It puts the frame on the ring of the queue the steering chose and makes
 * sure that queue's NAPI gets scheduled on the queue's CPU: directly when
 * that is the current CPU, else with an IPI (an async csd whose handler
 * calls napi_schedule(), as RPS does).  A "kick pending" bit guards the csd,
 * which cannot be queued twice, and batches: while one IPI is on its way,
 * further frames for that queue send none.
 *
 * With receive hashing on, a frame's bucket names its queue through the
 * table in effect; when that changes, the bucket follows only once its
 * old queue has handed every frame it already holds for it to the stack
 * (RFS's in-order rule), so that no flow is ever reordered.
 */
#include <linux/cpuhotplug.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "compat.h"
#include "trace.h"
#include "vrss.h"

static enum cpuhp_state vrss_cpuhp_state;

/* The i-th online CPU, wrapping around when there are more queues. */
static int vrss_queue_default_cpu(unsigned int i)
{
	unsigned int n = i % num_online_cpus();
	int cpu;

	for_each_online_cpu(cpu)
		if (n-- == 0)
			return cpu;
	return cpumask_first(cpu_online_mask);
}

/* IPI handler, in hardirq context on the queue's CPU. */
static void vrss_kick_handler(void *info)
{
	struct vrss_queue *q = info;

	/*
	 * Clear before scheduling: a frame enqueued after this point sends
	 * its own kick, one enqueued before it is seen by the poll.
	 */
	clear_bit(VRSS_QUEUE_KICK_PENDING, &q->state);
	/* Pairs with the producer's test_and_set_bit() after ptr_ring_produce. */
	smp_mb__after_atomic();
	napi_schedule(&q->napi);
}

static void vrss_queue_kick(struct vrss_queue *q)
{
	int cpu = READ_ONCE(q->cpu);

	if (cpu == smp_processor_id()) {
		napi_schedule(&q->napi);
		return;
	}
	if (test_and_set_bit(VRSS_QUEUE_KICK_PENDING, &q->state))
		return;
	if (smp_call_function_single_async(cpu, &q->csd)) {
		/* The CPU went away under us: process the queue here. */
		clear_bit(VRSS_QUEUE_KICK_PENDING, &q->state);
		napi_schedule(&q->napi);
		return;
	}
	atomic64_inc(&q->ipis);
}

/* Puts @skb on @q's ring; *@tail is then the ring position after it. */
static bool vrss_rx_enqueue(struct vrss_queue *q, struct sk_buff *skb,
			    u32 *tail)
{
	int err;

	spin_lock(&q->ring.producer_lock);
	err = __ptr_ring_produce(&q->ring, skb);
	if (!err)
		*tail = ++q->tail;
	spin_unlock(&q->ring.producer_lock);

	if (unlikely(err)) {
		atomic64_inc(&q->drops);
		kfree_skb(skb);
		return false;
	}
	vrss_queue_kick(q);
	return true;
}

static u64 vrss_bucket_pack(u32 queue, u32 tail)
{
	return (u64)queue << 32 | tail;
}

/*
 * Bucket @b's table entry now names queue @to, but its last frame went to
 * another queue.  It follows once that queue's head has passed the tail
 * that frame got; until then its frames keep going to the old queue.
 * Returns the queue for the current frame.
 */
static u32 vrss_bucket_follow(struct vrss_dev *vd, unsigned int b, u64 last,
			      u32 to)
{
	u32 from = last >> 32;

	for (;;) {
		if (from == to)
			return to;
		/* Pairs with the poll's release: those frames are in the stack. */
		if ((s32)(smp_load_acquire(&vd->queues[from].head) - (u32)last) < 0) {
			atomic64_inc(&vd->rx_held);
			return from;
		}
		/* Claim the move, so that it is counted and traced once. */
		if (atomic64_try_cmpxchg(&vd->buckets[b], &last,
					 vrss_bucket_pack(to, READ_ONCE(vd->queues[to].tail))))
			break;
		from = last >> 32;
	}
	atomic64_inc(&vd->bucket_moves);
	trace_vrss_bucket_move(vd->dev, b, from, to);
	return to;
}

/* The bucket's last frame went to @queue at @tail (unless a later one did). */
static void vrss_bucket_record(struct vrss_dev *vd, unsigned int b,
			       u32 queue, u32 tail)
{
	u64 last = atomic64_read(&vd->buckets[b]);

	do {
		if (last >> 32 != queue || (s32)(tail - (u32)last) <= 0)
			return;
	} while (!atomic64_try_cmpxchg(&vd->buckets[b], &last,
				       vrss_bucket_pack(queue, tail)));
}

/*
 * Receive hashing is being switched on: every frame so far went to the
 * primary queue, so that is where every bucket starts.
 */
void vrss_rx_buckets_reset(struct vrss_dev *vd)
{
	u64 primary = vrss_bucket_pack(0, READ_ONCE(vd->queues[0].tail));
	unsigned int b;

	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		atomic64_set(&vd->buckets[b], primary);
}

/* From the rx_handler, in softirq context with RCU held. */
void vrss_rx(struct vrss_dev *vd, struct sk_buff *skb)
{
	const struct vrss_steer *steer;
	unsigned int b;
	u32 qi, tail;
	u64 last;

	/* Receive hashing off, or nothing to hash: the primary queue. */
	if (!(vd->dev->features & NETIF_F_RXHASH) ||
	    !vrss_rss_bucket(vd, skb, &b)) {
		vrss_rx_enqueue(&vd->queues[0], skb, &tail);
		return;
	}

	steer = rcu_dereference(vd->steer);
	qi = steer->queue[b];
	last = atomic64_read(&vd->buckets[b]);
	if (unlikely(last >> 32 != qi))
		qi = vrss_bucket_follow(vd, b, last, qi);
	if (vrss_rx_enqueue(&vd->queues[qi], skb, &tail))
		vrss_bucket_record(vd, b, qi, tail);
}

static int vrss_poll(struct napi_struct *napi, int budget)
{
	struct vrss_queue *q = container_of(napi, struct vrss_queue, napi);
	unsigned int bytes = 0, delivered = 0;
	struct sk_buff *skb;
	int done = 0;

	/*
	 * The last poll used its whole budget, after which the core flushed
	 * GRO: every frame taken off the ring until then is in the stack.
	 */
	if (q->flush_pending) {
		/* Pairs with the acquire in vrss_bucket_follow(). */
		smp_store_release(&q->head, q->consumed);
		q->flush_pending = false;
	}

	while (done < budget && (skb = __ptr_ring_consume(&q->ring))) {
		done++;
		/*
		 * GRO rewrites the fragment lists of the skbs it merges, so
		 * it may only see data this queue alone holds.  A clone (a
		 * local TCP sender's segment through veth, or any frame while
		 * a packet socket taps the lower) gets a head of its own.
		 */
		if (unlikely(skb_unclone(skb, GFP_ATOMIC))) {
			atomic64_inc(&q->drops);
			kfree_skb(skb);
			continue;
		}
		skb_record_rx_queue(skb, q->index);
		bytes += skb->len;
		napi_gro_receive(napi, skb);
		delivered++;
	}

	u64_stats_update_begin(&q->syncp);
	u64_stats_add(&q->packets, delivered);
	u64_stats_add(&q->bytes, bytes);
	u64_stats_update_end(&q->syncp);
	WRITE_ONCE(q->last_cpu, smp_processor_id());
	q->consumed += done;

	if (done == budget) {
		q->flush_pending = true;
		return done;
	}
	if (napi_complete_done(napi, done)) {
		/*
		 * GRO is flushed: buckets waiting on this queue may move.
		 * Release pairs with the acquire in vrss_bucket_follow().
		 */
		smp_store_release(&q->head, q->consumed);
		/* A producer may have added a frame after our last look. */
		smp_mb();
		if (!__ptr_ring_empty(&q->ring))
			napi_schedule(napi);
	}
	return done;
}

/* A consistent packets/bytes pair, for ndo_get_stats64 and ethtool -S. */
void vrss_queue_read_stats(struct vrss_queue *q, u64 *packets, u64 *bytes)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&q->syncp);
		*packets = u64_stats_read(&q->packets);
		*bytes = u64_stats_read(&q->bytes);
	} while (u64_stats_fetch_retry(&q->syncp, start));
}

/*
 * Under RTNL: tell the core which NAPI context serves each receive queue
 * in use (netdev netlink on 6.12), or nothing once the device stops.
 */
void vrss_queues_link_napi(struct vrss_dev *vd, bool link)
{
	struct net_device *dev = vd->dev;
	unsigned int i;

	for (i = 0; i < dev->num_rx_queues; i++)
		vrss_compat_queue_set_napi(dev, i,
					   link && i < dev->real_num_rx_queues ?
					   &vd->queues[i].napi : NULL);
}

int vrss_queues_alloc(struct vrss_dev *vd)
{
	struct net_device *dev = vd->dev;
	unsigned int i;
	int err;

	vd->queues = kcalloc(dev->num_rx_queues, sizeof(*vd->queues), GFP_KERNEL);
	if (!vd->queues)
		return -ENOMEM;

	for (i = 0; i < dev->num_rx_queues; i++) {
		struct vrss_queue *q = &vd->queues[i];

		err = ptr_ring_init(&q->ring, vd->ring_size, GFP_KERNEL);
		if (err)
			goto err_rings;
		q->vd = vd;
		q->index = i;
		q->home_cpu = vrss_queue_default_cpu(i);
		q->cpu = q->home_cpu;
		q->last_cpu = -1;
		INIT_CSD(&q->csd, vrss_kick_handler, q);
		u64_stats_init(&q->syncp);
		netif_napi_add(dev, &q->napi, vrss_poll);
	}
	err = cpuhp_state_add_instance_nocalls(vrss_cpuhp_state, &vd->cpuhp_node);
	if (err)
		goto err_rings;
	return 0;

err_rings:
	while (i--) {
		netif_napi_del(&vd->queues[i].napi);
		ptr_ring_cleanup(&vd->queues[i].ring, NULL);
	}
	kfree(vd->queues);
	vd->queues = NULL;
	return err;
}

static void vrss_skb_free(void *ptr)
{
	kfree_skb(ptr);
}

/* After vrss_queues_stop(): nothing produces, no NAPI runs. */
void vrss_queues_free(struct vrss_dev *vd)
{
	unsigned int i;

	cpuhp_state_remove_instance_nocalls(vrss_cpuhp_state, &vd->cpuhp_node);
	for (i = 0; i < vd->dev->num_rx_queues; i++) {
		netif_napi_del(&vd->queues[i].napi);
		ptr_ring_cleanup(&vd->queues[i].ring, vrss_skb_free);
	}
	kfree(vd->queues);
	vd->queues = NULL;
}

/*
 * Device down (no producer, no NAPI): the frames still queued are dropped
 * and counted, and every ring position is caught up, before the rings
 * change size.
 */
int vrss_queues_resize(struct vrss_dev *vd, unsigned int size)
{
	struct sk_buff *skb;
	unsigned int i;
	int err;

	for (i = 0; i < vd->dev->num_rx_queues; i++) {
		struct vrss_queue *q = &vd->queues[i];

		while ((skb = __ptr_ring_consume(&q->ring))) {
			atomic64_inc(&q->drops);
			kfree_skb(skb);
			q->consumed++;
		}
		q->head = q->consumed;
		q->flush_pending = false;
		err = ptr_ring_resize(&q->ring, size, GFP_KERNEL, vrss_skb_free);
		if (err)
			return err;
	}
	vd->ring_size = size;
	return 0;
}

void vrss_queues_open(struct vrss_dev *vd)
{
	unsigned int i;

	for (i = 0; i < vd->dev->num_rx_queues; i++)
		napi_enable(&vd->queues[i].napi);
	/* Frames left from before the last stop are delivered now. */
	for (i = 0; i < vd->dev->num_rx_queues; i++) {
		local_bh_disable();
		if (!ptr_ring_empty(&vd->queues[i].ring))
			napi_schedule(&vd->queues[i].napi);
		local_bh_enable();
	}
}

/*
 * The device is no longer running, so the rx_handler no longer enqueues
 * once the RCU readers that saw it running are gone.  Then no csd may
 * still be in flight before the NAPI contexts are disabled: a csd handler
 * must not run against a queue that is being freed.
 */
void vrss_queues_stop(struct vrss_dev *vd)
{
	unsigned int i;

	synchronize_net();
	for (i = 0; i < vd->dev->num_rx_queues; i++) {
		struct vrss_queue *q = &vd->queues[i];

		while (test_bit(VRSS_QUEUE_KICK_PENDING, &q->state))
			cond_resched();
		napi_disable(&q->napi);
	}
}

/*
 * CPU hotplug.  Before a CPU goes down, its queues move to another online
 * CPU; they come home when it is back.  Frames already queued are not
 * lost: a kick in flight runs on the dying CPU when it flushes its IPIs,
 * and the core moves a NAPI scheduled there to a live CPU.
 */
static int vrss_cpu_down_prep(unsigned int cpu, struct hlist_node *node)
{
	struct vrss_dev *vd = hlist_entry(node, struct vrss_dev, cpuhp_node);
	int target = cpumask_any_but(cpu_online_mask, cpu);
	unsigned int i;

	for (i = 0; i < vd->dev->num_rx_queues; i++)
		if (vd->queues[i].cpu == cpu)
			WRITE_ONCE(vd->queues[i].cpu, target);
	return 0;
}

static int vrss_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct vrss_dev *vd = hlist_entry(node, struct vrss_dev, cpuhp_node);
	unsigned int i;

	for (i = 0; i < vd->dev->num_rx_queues; i++)
		if (vd->queues[i].home_cpu == cpu)
			WRITE_ONCE(vd->queues[i].cpu, cpu);
	return 0;
}

int vrss_rx_init(void)
{
	int ret;

	ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "net/vrss:online",
				      vrss_cpu_online, vrss_cpu_down_prep);
	if (ret < 0)
		return ret;
	vrss_cpuhp_state = ret;
	return 0;
}

void vrss_rx_exit(void)
{
	cpuhp_remove_multi_state(vrss_cpuhp_state);
}
