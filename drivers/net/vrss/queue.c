// SPDX-License-Identifier: GPL-2.0
/*
 * The spread queues: rings, kicks, NAPI polls, their placement on CPUs.
 *
 * Queues 1..N-1 are spread queues: a ring each, drained by a NAPI context
 * on a CPU of the queue's own (placed away from the CPUs the lower
 * delivers on), scheduled there with an IPI (an async csd whose handler
 * calls napi_schedule(), as RPS does).  A "kick pending" bit guards the
 * csd, which cannot be queued twice, and batches: while one IPI is on its
 * way, or the NAPI context is already scheduled, no other is sent.  What
 * goes onto a ring, and when a bucket may leave one, is move.c's; a ring
 * publishes how far its frames are in the stack (head).
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/sched/isolation.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/busy_poll.h>

#include "compat.h"
#include "hashing.h"
#include "vrss.h"

static enum cpuhp_state vrss_cpuhp_state;

/*
 * For tests only: where the rings' 32-bit positions start on a new
 * device, so that a test reaches their wrap after a few frames instead of
 * 2^32 (reorder.sh starts 2048 frames before it).
 */
static uint vrss_ring_start;
module_param_named(test_ring_start, vrss_ring_start, uint, 0644);
MODULE_PARM_DESC(test_ring_start,
		 "for tests: first ring position of a new device's queues (default 0)");

/* IPI handler, in hardirq context on the queue's CPU. */
static void vrss_kick_handler(void *info)
{
	struct vrss_queue *q = info;

	/*
	 * Clear, then schedule.  The other way round, a threaded (or busy
	 * polled) NAPI context could run its poll on another CPU and
	 * complete between the two, and a producer then finding it neither
	 * scheduled nor kicked would send nothing: its frame would wait on
	 * the ring for the next one.  This way a producer in between sends
	 * one more kick, at worst.  vrss_queues_stop() disables the NAPI
	 * context before it waits for the clear, so a schedule after it
	 * does nothing; the queue itself lives until vrss_queues_free()'s
	 * grace period, which this hardirq handler ends before.
	 */
	clear_bit_unlock(VRSS_QUEUE_KICK_PENDING, &q->state);
	napi_schedule(&q->napi);
}

void vrss_queue_kick(struct vrss_queue *q)
{
	int cpu = READ_ONCE(q->cpu);

	if (cpu == smp_processor_id()) {
		napi_schedule(&q->napi);
		return;
	}
	/* Scheduled already: its poll sees the frame. */
	/* Enqueue before the test; pairs with vrss_poll()'s after completing. */
	smp_mb();
	if (test_bit(NAPI_STATE_SCHED, &q->napi.state))
		return;
	if (test_and_set_bit(VRSS_QUEUE_KICK_PENDING, &q->state))
		return;
	/*
	 * Only an offline CPU fails the IPI (the pending bit covers the time
	 * the csd is in use), and the hotplug callback placed the queue
	 * elsewhere before the CPU went: there, then.  Here only if that
	 * fails too: a poll runs where it was scheduled, and this is the
	 * CPU the queue relieves.
	 */
	if (smp_call_function_single_async(cpu, &q->csd)) {
		int again = READ_ONCE(q->cpu);

		if (again == cpu || again == smp_processor_id() ||
		    smp_call_function_single_async(again, &q->csd)) {
			clear_bit(VRSS_QUEUE_KICK_PENDING, &q->state);
			napi_schedule(&q->napi);
			return;
		}
	}
	atomic64_inc(&q->ipis);
}

/* A frame queue @q could not take: counted as its drop. */
void vrss_queue_drop(struct vrss_queue *q, struct sk_buff *skb,
		     enum skb_drop_reason reason)
{
	atomic64_inc(&q->drops);
	kfree_skb_reason(skb, reason);
}

/*
 * The producer: a frame of the bucket whose state word is @bucket, which
 * names spread queue @q, onto @q's ring.  Under the ring's producer lock
 * the word is checked again and the ring's new tail recorded in it, so
 * that a move away from @q, made under the same lock (move.c), sees
 * every frame enqueued before it.  False when the bucket moved
 * meanwhile: the caller decides again.
 */
bool vrss_queue_enqueue(struct vrss_queue *q, atomic64_t *bucket,
			struct sk_buff *skb)
{
	u64 last;
	int err;

	spin_lock(&q->ring.producer_lock);
	last = atomic64_read(bucket);
	if (unlikely(last & VRSS_BUCKET_FLAGS || vrss_bucket_queue(last) != q->index)) {
		spin_unlock(&q->ring.producer_lock);
		return false;
	}
	err = __ptr_ring_produce(&q->ring, skb);
	if (!err)
		atomic64_set(bucket, vrss_bucket_pack(q->index, ++q->tail));
	spin_unlock(&q->ring.producer_lock);
	/* Full: its poll may still have to be kicked (frames parked there). */
	if (unlikely(err))
		vrss_queue_drop(q, skb, SKB_DROP_REASON_FULL_RING);
	vrss_queue_kick(q);
	return true;
}

/*
 * Flush @napi's GRO and hand up the frames it batched, as the core does
 * when a poll completes: gro_normal_list() calls a function the kernel
 * does not export, netif_receive_skb_list() the same one.  The batch is
 * napi_struct's on every kernel vrss builds for (struct gro_node's from
 * 6.15 on).
 */
static void vrss_poll_gro_flush(struct napi_struct *napi)
{
	LIST_HEAD(list);

	napi_gro_flush(napi, false);
	if (!napi->rx_count)
		return;
	list_splice_init(&napi->rx_list, &list);
	napi->rx_count = 0;
	netif_receive_skb_list(&list);
}

/*
 * Every frame taken off @q's ring so far is in the stack: GRO let go of
 * them, here and now, for the core's flushes do not always (with vrss0's
 * gro_flush_timeout only old ones, none between busy polls, only old ones
 * on the budget path at HZ >= 1000).  Then buckets waiting on @q may
 * leave: the new head is published, and if any bucket parked, the work
 * wakes them (a later frame of theirs would too, but none may come: the
 * request of a request/response flow waits for its answer).
 */
static void vrss_poll_publish(struct vrss_queue *q)
{
	vrss_poll_gro_flush(&q->napi);
	/* Pairs with the acquire in vrss_ring_lock_held_state(). */
	smp_store_release(&q->head, q->consumed);
	/*
	 * Head before parked_buckets; pairs with vrss_park_begin()'s.  And
	 * before draining, which a drain sets before it reads the heads
	 * (vrss_hashing_step()).
	 */
	smp_mb();
	if (READ_ONCE(q->parked_buckets))
		queue_work(system_highpri_wq, &q->vd->mv.park_work);
	vrss_hashing_wake(q->vd);
}

/*
 * One frame up, once, outside GRO, marked with this NAPI context unless
 * the lower's marked it (busy polling polls the lower's then).
 */
static void vrss_poll_up(struct napi_struct *napi, struct sk_buff *skb)
{
	skb_mark_napi_id(skb, napi);
	vrss_receive_skb(skb);
}

static int __vrss_poll(struct vrss_queue *q, int budget)
{
	struct net_device *dev = q->vd->dev;
	bool inplace = READ_ONCE(q->vd->inplace);
	unsigned int bytes = 0, delivered = 0;
	struct napi_struct *napi = &q->napi;
	struct sk_buff *skb;
	bool direct;
	int done = 0;

	/*
	 * Frames go up once, here, when GRO's hand-up would apply RPS or
	 * RFS set on this queue of vrss0: that would queue them to a third
	 * CPU's backlog after this poll publishes its head, and a bucket
	 * that then goes inline (where RPS never applies: the lower's
	 * rx_handler hands vrss0 the frame) would overtake them.  vrss is
	 * vrss0's steering; RPS on the lower runs before it.
	 */
	direct = inplace || vrss_compat_rps_set(dev, q->index);
	while (done < budget && (skb = __ptr_ring_consume(&q->ring))) {
		done++;
		/*
		 * GRO rewrites the fragment lists of the skbs it merges, so
		 * it may only see data this queue alone holds.  A clone (a
		 * local TCP sender's segment through veth, or any frame while
		 * a packet socket taps the lower) bound for it gets a head of
		 * its own.
		 */
		if (!direct && unlikely(skb_unclone(skb, GFP_ATOMIC))) {
			vrss_queue_drop(q, skb, SKB_DROP_REASON_NOMEM);
			continue;
		}
		bytes += skb->len;
		delivered++;
		/*
		 * In place the frame goes up as the lower's, with the lower's
		 * queue, once: not through RPS, which would send it back
		 * into the lower's rx_handler from another CPU's backlog, nor
		 * through a second GRO (the lower's ran).  The device is set
		 * here, as attach may have changed while it waited.
		 */
		if (inplace) {
			skb->dev = q->vd->lower;
			vrss_poll_up(napi, skb);
			continue;
		}
		skb->dev = dev;
		skb_record_rx_queue(skb, q->index);
		if (direct)
			vrss_poll_up(napi, skb);
		else
			napi_gro_receive(napi, skb);
	}

	u64_stats_update_begin(&q->syncp);
	u64_stats_add(&q->packets, delivered);
	u64_stats_add(&q->bytes, bytes);
	u64_stats_update_end(&q->syncp);
	WRITE_ONCE(q->last_cpu, smp_processor_id());
	if (done) {
		q->consumed += done;
		vrss_poll_publish(q);
	}
	if (done == budget)
		return done;
	/*
	 * Even when it asks to wait for the timer (napi_defer_hard_irqs),
	 * the core cleared SCHED: a producer that saw it set sent no kick,
	 * and its frame must not wait for gro_flush_timeout.  Busy polling
	 * keeps SCHED, and calls again.
	 */
	napi_complete_done(napi, done);
	/*
	 * A producer may have added a frame after our last look.  Kicked, not
	 * scheduled here: a threaded or busy-polled poll may have run on
	 * another CPU, and a poll stays where it was scheduled.
	 */
	smp_mb();
	if (!__ptr_ring_empty(&q->ring))
		vrss_queue_kick(q);
	return done;
}

static int vrss_poll(struct napi_struct *napi, int budget)
{
	struct vrss_queue *q = container_of(napi, struct vrss_queue, napi);
	struct vrss_dev *prev;
	int done;

	/*
	 * In place the frames go up as the lower's, through its rx_handler,
	 * which lets them pass: GRO's flushes included.
	 */
	prev = vrss_up_begin(q->vd);
	done = __vrss_poll(q, budget);
	vrss_up_end(prev);
	return done;
}

/*
 * A consistent packets/bytes pair, for ndo_get_stats64, ethtool -S and
 * netlink: queue 0's are the sum of every CPU's inline counters, and in
 * device mode each queue's add what its ring of the lower delivered.
 */
void vrss_queue_read_stats(struct vrss_dev *vd, unsigned int i, u64 *packets,
			   u64 *bytes)
{
	struct vrss_queue *q = &vd->queues[i];
	unsigned int start;
	u64 p, b;
	int cpu;

	/* Device mode's frames of this queue, as the lower's ring delivered them. */
	vrss_rx_device_stats(vd, i, packets, bytes);
	if (i) {
		do {
			start = u64_stats_fetch_begin(&q->syncp);
			p = u64_stats_read(&q->packets);
			b = u64_stats_read(&q->bytes);
		} while (u64_stats_fetch_retry(&q->syncp, start));
		*packets += p;
		*bytes += b;
		return;
	}
	for_each_possible_cpu(cpu) {
		const struct vrss_pcpu *pc = per_cpu_ptr(vd->rx.pcpu, cpu);

		do {
			start = u64_stats_fetch_begin(&pc->syncp);
			p = u64_stats_read(&pc->packets);
			b = u64_stats_read(&pc->bytes);
		} while (u64_stats_fetch_retry(&pc->syncp, start));
		*packets += p;
		*bytes += b;
	}
}

/*
 * The CPU queue @i last handed a frame up on: the poll's for a spread
 * queue (its own CPU before any), for the primary the CPU that handed up
 * the latest inline frame; -1 before any.
 */
int vrss_queue_cpu(struct vrss_dev *vd, unsigned int i)
{
	unsigned long best = 0, last;
	int cpu, ret = -1;

	if (i) {
		cpu = READ_ONCE(vd->queues[i].last_cpu);
		return cpu >= 0 ? cpu : READ_ONCE(vd->queues[i].cpu);
	}
	for_each_possible_cpu(cpu) {
		const struct vrss_pcpu *pc = per_cpu_ptr(vd->rx.pcpu, cpu);

		if (!u64_stats_read(&pc->packets))
			continue;
		last = READ_ONCE(pc->last);
		if (ret < 0 || time_after(last, best)) {
			best = last;
			ret = cpu;
		}
	}
	return ret;
}

/*
 * Under RTNL: tell the core which NAPI context serves each spread queue in
 * use (netdev netlink on 6.12), or nothing once the device stops.  The
 * primary has none: the lower's NAPI hands its frames up.
 */
void vrss_queues_link_napi(struct vrss_dev *vd, bool link)
{
	struct net_device *dev = vd->dev;
	unsigned int i;

	for (i = 1; i < dev->num_rx_queues; i++)
		vrss_compat_queue_set_napi(dev, i,
					   link && i < dev->real_num_rx_queues ?
					   &vd->queues[i].napi : NULL);
}

/*
 * RPS's rule for where receive work may go: not on a CPU isolated from
 * the scheduler's domains or from unbound work (isolcpus, nohz_full).
 */
static bool vrss_place_housekeeping(int cpu)
{
	return housekeeping_cpu(cpu, HK_TYPE_DOMAIN) && housekeeping_cpu(cpu, HK_TYPE_WQ);
}

/*
 * Where spread queue i may go, in order: housekeeping CPUs the lower does
 * not deliver on, housekeeping CPUs it delivers on, and only if there is
 * no housekeeping CPU at all, the isolated ones.
 */
static bool vrss_place_in_pass(int cpu, const struct cpumask *primary, int pass)
{
	if (pass == 2)
		return !vrss_place_housekeeping(cpu);
	return vrss_place_housekeeping(cpu) && cpumask_test_cpu(cpu, primary) == pass;
}

/*
 * Spread queue @q on @cpu: its kicks go there, and so does its thread
 * when vrss0's NAPI is threaded (a threaded poll runs wherever the
 * scheduler puts the thread, the vCPU vrss relieves included).  The
 * thread lives until the NAPI context is deleted, after the last
 * placement; a thread the user made later is bound at the next one.
 */
static void vrss_queue_place(struct vrss_queue *q, int cpu)
{
	struct task_struct *t = READ_ONCE(q->napi.thread);

	WRITE_ONCE(q->cpu, cpu);
	if (t && !cpumask_equal(t->cpus_ptr, cpumask_of(cpu)))
		set_cpus_allowed_ptr(t, cpumask_of(cpu));
}

/* The @k-th online CPU but @gone in the order of vrss_queues_arrange(). */
static int vrss_place_nth(const struct cpumask *primary, int gone,
			  unsigned int k)
{
	int cpu, pass;

	for (pass = 0; pass < 3; pass++)
		for_each_online_cpu(cpu)
			if (cpu != gone && vrss_place_in_pass(cpu, primary, pass) &&
			    k-- == 0)
				return cpu;
	return gone < 0 ? cpumask_first(cpu_online_mask) :
	       cpumask_any_but(cpu_online_mask, gone);
}

/*
 * CPU hotplug excluded (cpus_read_lock(), or a hotplug callback): put
 * spread queue i on the (i-1)-th CPU of this order: the online
 * housekeeping CPUs that vd->queues_avoid (the CPUs the lower delivers
 * on, as last measured) does not name first, then those it names, so that
 * spreading relieves the CPUs the lower delivers on, and queues share a
 * CPU only when there are more queues than such CPUs; isolated CPUs only
 * if every CPU is.  @gone, a CPU going down, gets none (-1: none goes).
 * A queue that moves keeps its frames in order: its one NAPI context
 * drains its one ring, wherever.
 */
static void vrss_queues_arrange(struct vrss_dev *vd, int gone)
{
	unsigned int i, n = 0;
	int cpu;

	for_each_online_cpu(cpu)
		n += cpu != gone && vrss_place_housekeeping(cpu);
	if (!n)
		n = num_online_cpus() - (gone >= 0);
	for (i = 1; i < vd->dev->num_rx_queues; i++)
		vrss_queue_place(&vd->queues[i],
				 vrss_place_nth(vd->queues_avoid, gone, (i - 1) % n));
}

/*
 * With cpus_read_lock() held: the lower delivers on @primary; the spread
 * queues go elsewhere, now and after CPUs come and go.
 */
void vrss_queues_place(struct vrss_dev *vd, const struct cpumask *primary)
{
	cpumask_copy(vd->queues_avoid, primary);
	vrss_queues_arrange(vd, -1);
}

int vrss_queues_alloc(struct vrss_dev *vd)
{
	struct net_device *dev = vd->dev;
	unsigned int i;
	int err;

	vd->queues = kcalloc(dev->num_rx_queues, sizeof(*vd->queues), GFP_KERNEL);
	if (!vd->queues)
		return -ENOMEM;
	if (!zalloc_cpumask_var(&vd->queues_avoid, GFP_KERNEL)) {
		err = -ENOMEM;
		goto err_queues;
	}
	vd->queues[0].last_cpu = -1;
	vd->queues[0].cpu = -1;
	/* Spread queues, each with a ring and a NAPI context. */
	for (i = 1; i < dev->num_rx_queues; i++) {
		struct vrss_queue *q = &vd->queues[i];

		err = ptr_ring_init(&q->ring, vd->ring_size, GFP_KERNEL);
		if (err)
			goto err_rings;
		q->vd = vd;
		q->index = i;
		q->last_cpu = -1;
		q->tail = READ_ONCE(vrss_ring_start);
		q->head = q->tail;
		q->consumed = q->tail;
		INIT_CSD(&q->csd, vrss_kick_handler, q);
		u64_stats_init(&q->syncp);
		netif_napi_add(dev, &q->napi, vrss_poll);
	}
	err = cpuhp_state_add_instance_nocalls(vrss_cpuhp_state, &vd->cpuhp_node);
	if (err)
		goto err_rings;
	/*
	 * Then placed (a CPU that comes or goes from now on places them
	 * again): until the lower has delivered, as if on the first online
	 * CPU.
	 */
	cpus_read_lock();
	vrss_queues_place(vd, cpumask_of(cpumask_first(cpu_online_mask)));
	cpus_read_unlock();
	return 0;

err_rings:
	while (--i > 0) {
		netif_napi_del(&vd->queues[i].napi);
		ptr_ring_cleanup(&vd->queues[i].ring, NULL);
	}
	free_cpumask_var(vd->queues_avoid);
err_queues:
	kfree(vd->queues);
	vd->queues = NULL;
	return err;
}

/* Teardown: the device is gone. */
static void vrss_skb_free(void *ptr)
{
	kfree_skb_reason(ptr, SKB_DROP_REASON_DEV_READY);
}

/* After vrss_queues_stop(): nothing produces, no NAPI runs. */
void vrss_queues_free(struct vrss_dev *vd)
{
	unsigned int i;

	cpuhp_state_remove_instance_nocalls(vrss_cpuhp_state, &vd->cpuhp_node);
	/* One grace period for all the NAPI contexts, as veth does. */
	for (i = 1; i < vd->dev->num_rx_queues; i++)
		__netif_napi_del(&vd->queues[i].napi);
	synchronize_net();
	for (i = 1; i < vd->dev->num_rx_queues; i++)
		ptr_ring_cleanup(&vd->queues[i].ring, vrss_skb_free);
	free_cpumask_var(vd->queues_avoid);
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

	for (i = 1; i < vd->dev->num_rx_queues; i++) {
		struct vrss_queue *q = &vd->queues[i];

		while ((skb = __ptr_ring_consume(&q->ring))) {
			vrss_queue_drop(q, skb, SKB_DROP_REASON_DEV_READY);
			q->consumed++;
		}
		/* A drain may read it meanwhile (under the producer lock). */
		smp_store_release(&q->head, q->consumed);
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

	for (i = 1; i < vd->dev->num_rx_queues; i++)
		napi_enable(&vd->queues[i].napi);
	/* Frames left from before the last stop are delivered now, there. */
	for (i = 1; i < vd->dev->num_rx_queues; i++) {
		local_bh_disable();
		if (!ptr_ring_empty(&vd->queues[i].ring))
			vrss_queue_kick(&vd->queues[i]);
		local_bh_enable();
	}
	/* And parked ones, whose rings may have been emptied meanwhile. */
	queue_work(system_highpri_wq, &vd->mv.park_work);
	/* A drain waits for them. */
	vrss_hashing_wake(vd);
}

/*
 * The device is no longer running, so the rx_handler no longer enqueues
 * once the RCU readers that saw it running are gone (one grace period for
 * all queues).  Then nothing may kick a queue: first no poll runs (a poll
 * queues the park work), then no park work (it kicks the queues parked
 * frames go to; a drain's try kicks none: it settles buckets on the
 * primary and hands their parked frames up itself); last, the kicks
 * already sent are waited for, whose handler must not run against a
 * queue that is being freed.  Every sender is stopped by then, so its
 * own touches of the queue after the IPI (the count, a fallback's
 * schedule) are over too.
 */
void vrss_queues_stop(struct vrss_dev *vd)
{
	unsigned int i;

	synchronize_net();
	for (i = 1; i < vd->dev->num_rx_queues; i++)
		napi_disable(&vd->queues[i].napi);
	/*
	 * Parked frames wait for the next open (unless a drain set up while
	 * down finds their ring drained: they go up, and are dropped as
	 * frames received while down are).
	 */
	cancel_work_sync(&vd->mv.park_work);
	cancel_work_sync(&vd->mv.claim_work);
	for (i = 1; i < vd->dev->num_rx_queues; i++)
		while (test_bit_acquire(VRSS_QUEUE_KICK_PENDING, &vd->queues[i].state))
			cond_resched();
}

/*
 * CPU hotplug, with the hotplug lock held (the load work's placement
 * takes it for reading, so the two never interleave).  Before a CPU goes
 * down, the queues are placed again without it; when one comes (back),
 * again with it.  Either way away from the CPUs the lower was last seen
 * delivering on.  Frames already queued are not lost: a kick sent before
 * the CPU went offline runs there when it flushes its IPIs, one sent
 * after fails and goes to the queue's new CPU (or, failing that too, the
 * sender's: vrss_queue_kick()), and the core moves a NAPI scheduled on
 * the dying CPU to a live one.
 */
static int vrss_cpu_down_prep(unsigned int cpu, struct hlist_node *node)
{
	struct vrss_dev *vd = hlist_entry(node, struct vrss_dev, cpuhp_node);

	vrss_queues_arrange(vd, cpu);
	return 0;
}

static int vrss_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct vrss_dev *vd = hlist_entry(node, struct vrss_dev, cpuhp_node);

	vrss_queues_arrange(vd, -1);
	return 0;
}

int vrss_queues_init(void)
{
	int ret;

	ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "net/vrss:online",
				      vrss_cpu_online, vrss_cpu_down_prep);
	if (ret < 0)
		return ret;
	vrss_cpuhp_state = ret;
	return 0;
}

void vrss_queues_exit(void)
{
	cpuhp_remove_multi_state(vrss_cpuhp_state);
}
