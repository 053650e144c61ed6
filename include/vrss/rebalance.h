/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rebalancing: which buckets of the table in effect move, by measured
 * load, from the busiest queue in use to the least busy one.  Pure C,
 * shared by the module and the host-side unit tests.
 *
 * The width policy (policy.h) decides how many queues spread the flows;
 * the buckets of each width are fixed by the user's table.  Two heavy
 * flows whose hashes meet in one queue then stay on one CPU while another
 * CPU idles.  Once per interval, while spread, this looks at the busy load
 * of every queue's CPU and the work each bucket brings in (its packets,
 * counted per CPU where the lower delivered it, smoothed over intervals):
 *
 *  - nothing moves unless the busiest queue's CPU is above the threshold
 *    and the least busy one is below threshold - hysteresis, or, when no
 *    CPU is that idle, unless the busy queue's receive work exceeds that
 *    of the queue with the least (never the primary's) by more than the
 *    hysteresis: the receive-bound guest, whose CPUs are all busy, one
 *    with the receive work the table pinned there, the others with
 *    applications, which the scheduler moves where the time is; hash luck
 *    (7 of 8 streams on one queue) would otherwise leave the pinned work
 *    where it is, and the guest no faster than with one vCPU;
 *  - the busiest queue's receive work (its CPU's softirq time) is shared
 *    among its buckets by their packets, smoothed as the loads are
 *    (vrss_rebal_weigh()), which estimates what each bucket costs there;
 *    a busiest queue with nothing to move (its CPU busy with an
 *    application) gives way to the next busiest above the threshold;
 *  - buckets move, heaviest first, while what has moved stays within half
 *    the gap between the two CPUs (in busy load; in receive work when all
 *    are busy): the two end no further apart than they started and the
 *    busiest only gets less busy.  A bucket heavier than
 *    that, an elephant bigger than the gap, stays: moving it would only
 *    make the other CPU the busiest one, and the next interval would move
 *    it back.  Buckets of less than 1 % of a CPU are not worth a move;
 *  - a bucket that moved stays put for VRSS_REBAL_HOLD intervals, and no
 *    rebalance follows another for VRSS_REBAL_SETTLE intervals, so that the
 *    smoothed loads show the last move before the next is decided.
 *
 * Since the busiest CPU can only get less busy, a steady load settles and
 * nothing moves back and forth.
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
 * One interval.  @eff is the table in effect over queues 0..@width-1 and is
 * changed in place; @weight[b] is bucket b's smoothed packets
 * (vrss_rebal_weigh());
 * @load[q] is queue q's smoothed load, in fixed point percent as
 * struct vrss_policy keeps it, its net part the receive work of the
 * queue's own buckets.  Buckets move from the busiest queue above the
 * threshold that has some to move (the busiest may be busy with work
 * that is not its buckets': an application, or the lower's own receive
 * work on a primary CPU) to the least busy one, if that is below
 * threshold - hysteresis; when none is, to the queue other than the
 * primary (0) with the least receive work, from one with more by over
 * the hysteresis.  The buckets that move are the entries of @eff that
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
	/*
	 * No CPU with time to spare: each is busy with receive work the table
	 * pinned there or with applications, which the scheduler can move.
	 * The queue with the least receive work takes, but never the primary:
	 * the lower's work of every frame is on its CPU too, and its net
	 * (its own buckets' share) does not show it.
	 */
	by_net = load[to].busy >= low;
	if (by_net) {
		to = 1;
		for (q = 2; q < width; q++)
			if (load[q].net < load[to].net)
				to = q;
	}
	res->to = to;

	/*
	 * Queues above the threshold in turn, busiest first, ties lowest
	 * first: each round takes the next one after (@ceil, @last) in that
	 * order, until one has buckets to move.
	 */
	for (tried = 0; tried < width; tried++) {
		from = width;
		for (q = 0; q < width; q++) {
			if (load[q].busy <= high || q == to)
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
		if (!by_net)
			room = (load[from].busy - load[to].busy) / 2;
		else if (load[from].net > load[to].net + hyst)
			room = (load[from].net - load[to].net) / 2;
		else
			continue;	/* no more receive work than @to's */
		res->from = from;
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
