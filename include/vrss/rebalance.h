/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rebalancing: which buckets of the table in effect move, by measured
 * load, from a busy queue to a less busy one.  Pure C, shared by the
 * module and the host-side unit tests.
 *
 * The width policy (policy.h) decides how many queues spread the flows;
 * the buckets of each width are fixed by the user's table.  Two heavy
 * flows whose hashes meet in one queue then stay on one CPU while another
 * CPU idles.  Once per interval, while spread, this looks at the busy load
 * of every queue's CPU and the work each bucket brings in (its packets,
 * counted per CPU where the lower delivered it, smoothed over intervals):
 *
 *  - buckets move only from a queue whose CPU is above the threshold;
 *  - to the least busy queue, if that is below threshold - hysteresis,
 *    while what has moved stays within half the busy gap between the two
 *    CPUs: the two end no further apart than they started and the busiest
 *    only gets less busy;
 *  - when no CPU is that idle (the receive-bound guest: one CPU busy with
 *    the receive work the table pinned there, the others with the
 *    receiving applications, which the scheduler moves to where time frees
 *    up), to the queue with the least receive work that is less busy and
 *    not the primary (vrss_rebal_net_target()), if the busy queue has
 *    more receive work by over the hysteresis, within half that gap.
 *    Otherwise hash luck (7 or more of 8 streams on one of 2 queues: 7 %
 *    of random splits) leaves the guest as slow as with one vCPU;
 *  - the busy queue's receive work (its CPU's softirq time) is shared
 *    among its buckets by their packets, smoothed as the loads are
 *    (vrss_rebal_weigh()), which estimates what each bucket costs there;
 *    a busy queue with nothing to move (its CPU busy with an application)
 *    gives way to the next busiest above the threshold;
 *  - buckets move heaviest first.  A bucket heavier than the room, an
 *    elephant bigger than the gap, stays: moving it would only make the
 *    other CPU the busiest one, and the next interval would move it back.
 *    Buckets of less than 1 % of a CPU are not worth a move;
 *  - a bucket that moved stays put for VRSS_REBAL_HOLD intervals, and no
 *    rebalance follows another for VRSS_REBAL_SETTLE intervals, so that the
 *    smoothed loads show the last move before the next is decided.
 *
 * Since every move is from a busier CPU to a less busy one, within half
 * their gap, a steady load settles.  Where the two rules meet (receive
 * work moved to a CPU busy with an application, which then leaves the
 * primary with time to spare) a bucket can go back after its hold; the
 * unit tests bound how often.
 */
#ifndef _VRSS_REBALANCE_H
#define _VRSS_REBALANCE_H

#include <linux/types.h>

#include <vrss/indir.h>
#include <vrss/policy.h>

#define VRSS_REBAL_HOLD		10	/* intervals a moved bucket stays */
#define VRSS_REBAL_SETTLE	2	/* intervals between two rebalances */
#define VRSS_REBAL_MIN_PERCENT	1	/* a bucket worth moving */

struct vrss_rebal {
	u8 hold[VRSS_INDIR_SIZE];	/* intervals before it may move again */
	u8 settle;			/* intervals before the next rebalance */
};

/* What one step did: from, to and how many buckets; moved 0 when none. */
struct vrss_rebal_result {
	unsigned int from;
	unsigned int to;
	unsigned int moved;
	u32 load;		/* estimated load moved, fixed point percent */
};

/* Fixed point of the weights: enough for a packet a bucket to decay. */
#define VRSS_REBAL_WEIGHT_SHIFT	4

/*
 * Each bucket's packets of the interval into its smoothed weight, in fixed
 * point and smoothed the same way as the loads (vrss_policy_smooth()), so
 * that a CPU's smoothed receive work is shared by weights that cover the
 * same intervals.  With raw counts, one interval in which a heavy flow's
 * sender did not run would make a light flow beside it look as costly as
 * all of that CPU's receive work, and move it.  Counts saturate at 2^27
 * per interval (13 Mpps at the longest interval).
 */
static inline void vrss_rebal_weigh(u32 *weight, const u32 *packets)
{
	const u32 max = ~0u >> (VRSS_REBAL_WEIGHT_SHIFT + 1);
	unsigned int b;

	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		weight[b] = (weight[b] +
			     ((packets[b] < max ? packets[b] : max) <<
			      VRSS_REBAL_WEIGHT_SHIFT)) / 2;
}

/*
 * The primary's (queue 0's) part of its CPU's receive work @net: that
 * CPU's softirq time is the lower's receive work of every frame it
 * delivers there, of which only queue 0's own buckets' share would move
 * with them.  @eff is the table in effect, @weight the smoothed weights.
 */
static inline u32 vrss_rebal_primary_net(u32 net, const u32 *eff,
					 const u32 *weight)
{
	u64 all = 0, own = 0;
	unsigned int b;

	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		all += weight[b];
		if (!eff[b])
			own += weight[b];
	}
	return all ? (u32)(((u64)net * own) / all) : 0;
}

/* The table in effect changed under it (width, user's table): forget. */
static inline void vrss_rebal_reset(struct vrss_rebal *r)
{
	unsigned int b;

	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		r->hold[b] = 0;
	r->settle = 0;
}

/*
 * Move buckets of queue @from to @to, heaviest first, while what moved
 * stays within @room; the number moved.
 */
static inline unsigned int vrss_rebal_move(struct vrss_rebal *r, u32 *eff,
					   const u32 *weight,
					   const struct vrss_load *load,
					   unsigned int from, unsigned int to,
					   u32 room, u32 *moved_load)
{
	u32 net, cost, best_cost;
	unsigned int b, best, moved = 0;
	u64 total = 0;

	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		if (eff[b] == from)
			total += weight[b];
	if (!total)
		return 0;	/* the busy CPU is busy with something else */

	net = load[from].net < load[from].busy ? load[from].net : load[from].busy;
	for (;;) {
		/*
		 * The heaviest bucket left that fits (one that moved is on
		 * @to now); ties go to the lowest.
		 */
		best = VRSS_INDIR_SIZE;
		best_cost = 0;
		for (b = 0; b < VRSS_INDIR_SIZE; b++) {
			if (eff[b] != from || r->hold[b] || !weight[b])
				continue;
			cost = (u32)(((u64)net * weight[b]) / total);
			if (cost < VRSS_REBAL_MIN_PERCENT << VRSS_LOAD_SHIFT || cost > room)
				continue;
			if (best == VRSS_INDIR_SIZE || weight[b] > weight[best]) {
				best = b;
				best_cost = cost;
			}
		}
		if (best == VRSS_INDIR_SIZE)
			break;
		eff[best] = to;
		r->hold[best] = VRSS_REBAL_HOLD;
		room -= best_cost;
		*moved_load += best_cost;
		moved++;
	}
	return moved;
}

/*
 * Where receive work from @from goes when no CPU has time to spare: each
 * is busy with receive work the table pinned there or with applications,
 * which the scheduler can move where time frees up.  The queue with the
 * least receive work takes (ties: the lowest), if it is less busy than
 * @from: moving work onto a busier CPU would only make that one the
 * busiest, and moves would go back and forth.  Never the primary (0):
 * the lower's work of every frame is on its CPU too, which its net (its
 * own buckets' share) does not show.  @width if none.
 */
static inline unsigned int vrss_rebal_net_target(const struct vrss_load *load,
						 unsigned int width,
						 unsigned int from)
{
	unsigned int q, to = width;

	for (q = 1; q < width; q++) {
		if (q == from || load[q].busy >= load[from].busy)
			continue;
		if (to == width || load[q].net < load[to].net)
			to = q;
	}
	return to;
}

/*
 * One interval.  @eff is the table in effect over queues 0..@width-1 and is
 * changed in place; @weight[b] is bucket b's smoothed packets
 * (vrss_rebal_weigh());
 * @load[q] is queue q's smoothed load, in fixed point percent as
 * struct vrss_policy keeps it, its net part the receive work of the
 * queue's own buckets.  Buckets move from the busiest queue above the
 * threshold that has some to move (the busiest may be busy with work
 * that is not its buckets': an application, or the lower's own receive
 * work on a primary CPU) to the least busy one, if that is below
 * threshold - hysteresis; when none is, to the least busy-with-receive-
 * work queue that is less busy and not the primary
 * (vrss_rebal_net_target()), from one with more receive work by over the
 * hysteresis.  The buckets that move are the entries of @eff that
 * changed; returns the number of them.
 */
static inline unsigned int vrss_rebal_step(struct vrss_rebal *r, u32 *eff,
					   const u32 *weight,
					   const struct vrss_load *load,
					   unsigned int width,
					   unsigned int threshold,
					   unsigned int hysteresis,
					   struct vrss_rebal_result *res)
{
	u32 high = threshold << VRSS_LOAD_SHIFT, low, hyst, ceil = 0, room;
	unsigned int b, q, from, to = 0, tried, last = 0;
	bool by_net;

	res->moved = 0;
	res->load = 0;
	res->from = 0;
	res->to = 0;
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		if (r->hold[b])
			r->hold[b]--;
	if (r->settle) {
		r->settle--;
		return 0;
	}
	if (width < 2 || threshold <= hysteresis || threshold >= VRSS_PERCENT_MAX)
		return 0;
	low = (threshold - hysteresis) << VRSS_LOAD_SHIFT;
	hyst = hysteresis << VRSS_LOAD_SHIFT;

	/* The least busy queue; ties go to the lowest. */
	for (q = 1; q < width; q++)
		if (load[q].busy < load[to].busy)
			to = q;
	/* No CPU with time to spare: vrss_rebal_net_target() per queue. */
	by_net = load[to].busy >= low;

	/*
	 * Queues above the threshold in turn, busiest first, ties lowest
	 * first: each round takes the next one after (@ceil, @last) in that
	 * order, until one has buckets to move.
	 */
	for (tried = 0; tried < width; tried++) {
		from = width;
		for (q = 0; q < width; q++) {
			if (load[q].busy <= high)
				continue;
			if (tried && !(load[q].busy < ceil ||
				       (load[q].busy == ceil && q > last)))
				continue;
			if (from == width || load[q].busy > load[from].busy)
				from = q;
		}
		if (from == width)
			break;
		ceil = load[from].busy;
		last = from;
		if (by_net) {
			to = vrss_rebal_net_target(load, width, from);
			if (to == width || load[from].net <= load[to].net + hyst)
				continue;	/* none with much less */
			room = (load[from].net - load[to].net) / 2;
		} else {
			room = (load[from].busy - load[to].busy) / 2;
		}
		res->from = from;
		res->to = to;
		res->moved = vrss_rebal_move(r, eff, weight, load, from, to,
					     room, &res->load);
		if (res->moved)
			break;
	}
	if (res->moved)
		r->settle = VRSS_REBAL_SETTLE;
	return res->moved;
}

#endif /* _VRSS_REBALANCE_H */
