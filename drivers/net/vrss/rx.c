// SPDX-License-Identifier: GPL-2.0
/*
 * Receive: the primary queue inline, the spread queues on rings.
 *
 * The lower device's rx_handler runs on whichever CPU the lower delivered
 * the frame (its interrupt's, for a NIC).  A frame for the primary queue,
 * queue 0, is handed to the stack right there, as macvlan passthru does
 * (RX_HANDLER_ANOTHER with skb->dev = vrss0): no ring, no IPI, no second
 * GRO pass, only per-CPU counters.  With receive hashing off every frame
 * goes that way, so vrss costs what the lower costs.
 *
 * Frames for spread queues go onto rings (queue.c) when their bucket is
 * on the queue the table in effect names; while the table moves a
 * bucket, move.c keeps its flows in order.
 */
#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "device.h"
#include "gate.h"
#include "vrss.h"

/* A bucket's frames and bytes on this CPU, for rebalancing. */
static void vrss_rx_count_bucket(struct vrss_pcpu *pc, struct sk_buff *skb,
				 unsigned int b)
{
	/* A frame the lower's GRO merged (or a local GSO one) is its segments' work. */
	WRITE_ONCE(pc->bucket_packets[b], pc->bucket_packets[b] +
		   (skb_is_gso(skb) ? max_t(u32, skb_shinfo(skb)->gso_segs, 1) : 1));
	WRITE_ONCE(pc->bucket_bytes[b], pc->bucket_bytes[b] + skb->len);
}

/*
 * Device mode: the lower's table put the frame on the ring of the vCPU
 * meant to take it, which is where it is now; up it goes, as the lower's
 * queue (vrss0's queue N is the lower's ring N).  With rxhash on the gate
 * still samples, and while spread the bucket's load is counted, from the
 * device's own hash where it gave one (its key is vrss's).
 */
static rx_handler_result_t vrss_rx_device(struct vrss_dev *vd,
					  struct vrss_pcpu *pc,
					  struct sk_buff *skb)
{
	bool count = READ_ONCE(vd->gate.count_buckets);
	bool holding = atomic_read(&vd->dm.holds);
	unsigned int b, q;
	bool hashed;

	vrss_gate_frame(vd);
	q = skb_rx_queue_recorded(skb) ? skb_get_rx_queue(skb) : 0;
	if (unlikely(q >= vd->dev->num_rx_queues))
		q = 0;
	/* The device's own hash is the one its table indexes by. */
	hashed = !skb->sw_hash && (skb->l4_hash || skb->hash);
	if (hashed)
		b = vrss_indir_bucket(skb->hash);
	else if (count || holding)
		hashed = vrss_rss_bucket(vd, skb, &b);
	if (hashed) {
		if (unlikely(holding) && vrss_device_hold(vd, skb, b, q))
			return RX_HANDLER_CONSUMED;
		if (count)
			vrss_rx_count_bucket(pc, skb, b);
		vrss_device_check_ring(vd, b, q);
	}
	vrss_rx_device_count(vd, skb, q);
	/* Read by vrss_queue_cpu() on another CPU. */
	WRITE_ONCE(pc->last, jiffies);
	return RX_HANDLER_ANOTHER;
}

/*
 * From the rx_handler, in softirq context with RCU held, skb->dev set to
 * vrss0 (in place: still the lower).  RX_HANDLER_ANOTHER hands the frame
 * up here and now.
 */
rx_handler_result_t vrss_rx(struct vrss_dev *vd, struct sk_buff *skb)
{
	struct vrss_pcpu *pc = this_cpu_ptr(vd->rx.pcpu);
	unsigned int b, q;
	u64 last;

	/* Read by the load work on another CPU. */
	WRITE_ONCE(pc->seen, pc->seen + 1);
	if (vrss_device_held(vd) && likely(skb->pkt_type != PACKET_OTHERHOST))
		return vrss_rx_device(vd, pc, skb);
	/*
	 * Receive hashing off: the lower's frame, as it came.  A frame for
	 * another host (a promiscuous lower) goes up inline too, unhashed,
	 * as macvlan hands it up: the stack drops it or a packet socket
	 * takes it; it is no work to spread and must not take a ring slot.
	 */
	if (!smp_load_acquire(&vd->hs.on) || unlikely(skb->pkt_type == PACKET_OTHERHOST))
		return vrss_rx_inline(pc, skb);
	/*
	 * The load work runs only with hashing on, and at width 1 it waits
	 * for a frame to take its next sample (gate.c).  No barrier for
	 * a frame: one that misses the work's going to wait leaves the
	 * wakeup to the next.
	 */
	vrss_gate_frame(vd);
	if (!vrss_rss_bucket(vd, skb, &b)) {
		u64_stats_update_begin(&pc->syncp);
		u64_stats_inc(&pc->nohash);
		u64_stats_update_end(&pc->syncp);
		return vrss_rx_inline(pc, skb);
	}
	/*
	 * The bucket's load, for rebalancing, while it can use it (spread):
	 * this CPU's counters alone.
	 */
	if (READ_ONCE(vd->gate.count_buckets))
		vrss_rx_count_bucket(pc, skb, b);
	/*
	 * On the primary (SINGLE, and the primary's buckets when spread):
	 * up it goes.  A move away claims the bucket first, then waits for
	 * this RCU read-side section to end (vrss_move_steer_changed()).
	 */
	last = atomic64_read(&vd->mv.buckets[b]);
	if (likely(!last))
		return vrss_rx_inline(pc, skb);
	/*
	 * On the spread queue the table in effect names: onto its ring.
	 * Anything else (a bucket moving, or parked) is move.c's, as is a
	 * bucket that moved under the producer's lock.
	 */
	q = vrss_bucket_queue(last);
	if (likely(!(last & VRSS_BUCKET_FLAGS)) &&
	    q == rcu_dereference(vd->rss.steer)->queue[b] &&
	    vrss_queue_enqueue(&vd->queues[q], &vd->mv.buckets[b], skb))
		return RX_HANDLER_CONSUMED;
	return vrss_move_frame(vd, pc, skb, b, atomic64_read(&vd->mv.buckets[b]));
}

/* Frames that had nothing to hash, over every CPU. */
u64 vrss_rx_nohash(struct vrss_dev *vd)
{
	unsigned int start;
	u64 sum = 0, n;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct vrss_pcpu *pc = per_cpu_ptr(vd->rx.pcpu, cpu);

		do {
			start = u64_stats_fetch_begin(&pc->syncp);
			n = u64_stats_read(&pc->nohash);
		} while (u64_stats_fetch_retry(&pc->syncp, start));
		sum += n;
	}
	return sum;
}

/* Device mode's frames of queue @i, over every CPU. */
void vrss_rx_device_stats(struct vrss_dev *vd, unsigned int i, u64 *packets,
			  u64 *bytes)
{
	unsigned int start;
	u64 p, b;
	int cpu;

	*packets = 0;
	*bytes = 0;
	for_each_possible_cpu(cpu) {
		const struct vrss_dev_qstats *qs = per_cpu_ptr(vd->rx.qstats, cpu);

		do {
			start = u64_stats_fetch_begin(&qs->syncp);
			p = u64_stats_read(&qs->q[i].packets);
			b = u64_stats_read(&qs->q[i].bytes);
		} while (u64_stats_fetch_retry(&qs->syncp, start));
		*packets += p;
		*bytes += b;
	}
}

/*
 * Per bucket, the frames and bytes delivered since the last call, over
 * every CPU (the sums wrap; their differences do not mind).
 */
void vrss_rx_bucket_sample(struct vrss_dev *vd, struct vrss_bucket_load *bl)
{
	unsigned long bytes;
	unsigned int b;
	u32 packets;
	int cpu;

	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		packets = 0;
		bytes = 0;
		for_each_possible_cpu(cpu) {
			const struct vrss_pcpu *pc = per_cpu_ptr(vd->rx.pcpu, cpu);

			packets += READ_ONCE(pc->bucket_packets[b]);
			bytes += READ_ONCE(pc->bucket_bytes[b]);
		}
		bl->packets[b] = packets - bl->packets_seen[b];
		bl->bytes[b] = bytes - bl->bytes_seen[b];
		bl->packets_seen[b] = packets;
		bl->bytes_seen[b] = bytes;
	}
}

/* The per-CPU counters of what the lower delivered (struct vrss_pcpu). */
int vrss_rx_init(struct vrss_dev *vd)
{
	struct vrss_dev_qstats *qs;
	int cpu;

	vd->rx.pcpu = alloc_percpu(struct vrss_pcpu);
	vd->rx.qstats = __alloc_percpu(struct_size(qs, q, vd->dev->num_rx_queues),
				       __alignof__(*qs));
	if (!vd->rx.pcpu || !vd->rx.qstats) {
		vrss_rx_uninit(vd);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		u64_stats_init(&per_cpu_ptr(vd->rx.pcpu, cpu)->syncp);
		u64_stats_init(&per_cpu_ptr(vd->rx.qstats, cpu)->syncp);
	}
	return 0;
}

/* No rx_handler runs, no queue polls (vrss_queues_free()). */
void vrss_rx_uninit(struct vrss_dev *vd)
{
	free_percpu(vd->rx.qstats);
	vd->rx.qstats = NULL;
	free_percpu(vd->rx.pcpu);
	vd->rx.pcpu = NULL;
}
